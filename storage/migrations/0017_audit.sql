-- The audit log (docs/audit.md): who did what security-relevant thing, when, from where.
-- One row per event, written in the same transaction as the action where there is one.
-- No foreign keys: an event outlives the account, device or organization it names, until
-- the retention period (audit_retention_days) is over. `details` never holds a secret.
CREATE TABLE audit_events (
    id           TEXT PRIMARY KEY,
    created_date TEXT NOT NULL,
    org_id       TEXT,                  -- the organization it concerns; NULL: the site's
    action       TEXT NOT NULL,         -- sign_in, sign_in_failed, user_created, ...
    actor_kind   TEXT NOT NULL CHECK (actor_kind IN
                     ('staff', 'user', 'device', 'anonymous', 'operator', 'system')),
    actor_id     TEXT,
    target_kind  TEXT,
    target_id    TEXT,
    client       TEXT,                  -- the client's address, when over HTTP
    request_id   TEXT,
    details      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(details))
) STRICT;
CREATE INDEX audit_events_org ON audit_events (org_id, created_date, id);
CREATE INDEX audit_events_date ON audit_events (created_date, id);
