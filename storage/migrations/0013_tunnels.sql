-- 0013: device tunnels (docs/tunnels.md). A tunnel lets a client reach a service on a device
-- through the server: both ends connect out to the server over WebSockets and the server
-- relays bytes. Each end has its own token (256 random bits), kept only as its SHA-256, bound
-- to this tunnel and to that end; a tunnel that is closed or past `expires_date` accepts
-- neither. Rows go with their device (a deleted device's tunnels are dropped with it).

CREATE TABLE tunnels (
    id                TEXT PRIMARY KEY,           -- the tunnel's UUID
    org_id            TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    device_id         TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    services          TEXT NOT NULL CHECK (json_valid(services)),
    timeout_seconds   INTEGER NOT NULL,
    client_token_hash TEXT NOT NULL,
    device_token_hash TEXT NOT NULL,
    sent_to           TEXT,                       -- the user mailed the client token, if any
    opened_date       TEXT NOT NULL,
    opened_by         TEXT NOT NULL,
    expires_date      TEXT NOT NULL,
    closed_date       TEXT,
    closed_by         TEXT
) STRICT;
CREATE UNIQUE INDEX tunnels_by_client_token ON tunnels (client_token_hash);
CREATE UNIQUE INDEX tunnels_by_device_token ON tunnels (device_token_hash);
-- A device's open tunnels (its views and GET .../tunnels), newest last.
CREATE INDEX tunnels_by_device ON tunnels (device_id, closed_date, opened_date);
