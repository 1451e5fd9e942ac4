-- 0038: a queued command may be canceled (docs/commands.md, "Canceling").
--
-- One caller could fill a device's command_device_bytes with queued commands lasting up to
-- 7 days, and no one could clear them: every other caller, the org admin included, got
-- 429 for 8 days. A queued command not yet answered may now be canceled by those who may
-- update the device; it ends `canceled`, its payload dropped (its bytes free at once), and
-- is kept like any finished command until the sweep deletes it. SQLite cannot widen a
-- CHECK in place: the table is made again with 'canceled' among its states, its rows and
-- indexes as they were (no other table refers to it).
CREATE TABLE device_commands_new (
    id            TEXT PRIMARY KEY,           -- the request ID (in the MQTT topic)
    org_id        TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    device_id     TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    payload       TEXT NOT NULL CHECK (json_valid(payload)),
    state         TEXT NOT NULL CHECK (state IN
                      ('sent', 'queued', 'delivered', 'answered', 'timed_out', 'expired',
                       'canceled')),
    queued        INTEGER NOT NULL,           -- 1: `queue: true` (202, answered later)
    created_date  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    expires_date  TEXT NOT NULL,              -- no reply (or delivery) is taken after it
    delivered_date TEXT,
    ended_date    TEXT,                       -- answered, timed out, expired or canceled
    reply_status  INTEGER,
    reply_payload TEXT CHECK (reply_payload IS NULL OR json_valid(reply_payload))
) STRICT;
INSERT INTO device_commands_new
    SELECT id, org_id, device_id, name, payload, state, queued, created_date, created_by,
           expires_date, delivered_date, ended_date, reply_status, reply_payload
      FROM device_commands;
DROP TABLE device_commands;
ALTER TABLE device_commands_new RENAME TO device_commands;
-- A device's commands, newest first (GET .../commands), and the per-minute counts.
CREATE INDEX device_commands_by_device ON device_commands (device_id, created_date);
-- What waits for a device that comes back.
CREATE INDEX device_commands_queued ON device_commands (device_id, expires_date)
    WHERE state = 'queued';
-- The sweep: what has ended, by when.
CREATE INDEX device_commands_ended ON device_commands (ended_date) WHERE ended_date IS NOT NULL;
