-- Billing points (docs/billing.md): a ledger per organization that staff credit and that
-- metered usage debits. Amounts never change once written: a correction is a new entry.
CREATE TABLE billing_entries (
    id                TEXT PRIMARY KEY,
    org_id            TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    kind              TEXT NOT NULL CHECK (kind IN ('credit', 'debit', 'usage')),
    points            INTEGER NOT NULL,
    meter             TEXT CHECK (meter IS NULL OR meter IN
                          ('devices', 'users', 'data_bytes', 'file_bytes', 'mqtt_messages')),
    quantity          INTEGER,
    day               TEXT,
    description       TEXT NOT NULL DEFAULT '',
    tags              TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    created_date      TEXT NOT NULL,
    created_by        TEXT,
    last_updated_date TEXT NOT NULL,
    last_updated_by   TEXT
) STRICT;
CREATE INDEX billing_entries_org ON billing_entries (org_id, created_date, id);
-- One usage debit per organization, day and meter, however often the meter runs.
CREATE UNIQUE INDEX billing_entries_usage ON billing_entries (org_id, day, meter)
    WHERE kind = 'usage';

-- Metered usage per organization, UTC day and meter. Counters (mqtt_messages) add up the
-- meter's flushes; gauges (devices, users, data_bytes, file_bytes) hold the day's snapshot.
-- `debited` is set once the closed day's debit is in the ledger.
CREATE TABLE billing_usage (
    org_id   TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    day      TEXT NOT NULL,
    meter    TEXT NOT NULL,
    quantity INTEGER NOT NULL,
    debited  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, day, meter)
) STRICT, WITHOUT ROWID;
CREATE INDEX billing_usage_open ON billing_usage (day) WHERE debited = 0;

-- The UTC days whose gauges were snapshotted (once per day, by the first flush of it).
CREATE TABLE billing_snapshots (
    day        TEXT PRIMARY KEY,
    taken_date TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Points per unit of each meter, per organization; a meter not named uses the default.
CREATE TABLE billing_rates (
    org_id            TEXT PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
    rates             TEXT NOT NULL CHECK (json_valid(rates)),
    last_updated_date TEXT NOT NULL,
    last_updated_by   TEXT
) STRICT, WITHOUT ROWID;
