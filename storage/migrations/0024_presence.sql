-- 0024: who is online (docs/presence.md). One row per device that has ever connected:
-- since when it is connected (NULL while offline) and why its last connection ended. Kept
-- apart from `devices`: it changes on every connect and disconnect. At start every device
-- is marked offline (a device is online only once it connects to this run of the server).
CREATE TABLE device_presence (
    device_id              TEXT PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
    connected_since        TEXT,
    last_disconnect_date   TEXT,
    last_disconnect_reason TEXT
) STRICT;
CREATE INDEX device_presence_online ON device_presence (device_id) WHERE connected_since IS NOT NULL;
