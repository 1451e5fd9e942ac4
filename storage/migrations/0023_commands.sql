-- 0023: commands with replies (docs/commands.md). A command is a named request sent to a
-- device over MQTT, answered by the device on its reply topic. One row per command: who
-- sent it, what, its state and, once answered, the reply. A queued command waits here for
-- its device (it survives a restart) until `expires_date`; a finished one is kept
-- `command_retention_hours` after it ended, then the sweep deletes it. Rows go with their
-- device.
CREATE TABLE device_commands (
    id            TEXT PRIMARY KEY,           -- the request ID (in the MQTT topic)
    org_id        TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    device_id     TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    payload       TEXT NOT NULL CHECK (json_valid(payload)),
    state         TEXT NOT NULL CHECK (state IN
                      ('sent', 'queued', 'delivered', 'answered', 'timed_out', 'expired')),
    queued        INTEGER NOT NULL,           -- 1: `queue: true` (202, answered later)
    created_date  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    expires_date  TEXT NOT NULL,              -- no reply (or delivery) is taken after it
    delivered_date TEXT,
    ended_date    TEXT,                       -- answered, timed out or expired
    reply_status  INTEGER,
    reply_payload TEXT CHECK (reply_payload IS NULL OR json_valid(reply_payload))
) STRICT;
-- A device's commands, newest first (GET .../commands), and the per-minute count.
CREATE INDEX device_commands_by_device ON device_commands (device_id, created_date);
-- What waits for a device that comes back.
CREATE INDEX device_commands_queued ON device_commands (device_id, expires_date)
    WHERE state = 'queued';
-- The sweep: what has ended, by when.
CREATE INDEX device_commands_ended ON device_commands (ended_date) WHERE ended_date IS NOT NULL;
