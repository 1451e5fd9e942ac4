-- The MQTT broker's persistent sessions (clean session false), kept across restarts as
-- MQTT 3.1.1 says (embedded_broker/, docs/mqtt.md): who owns each session and with which
-- credential, its subscriptions, the QoS 2 packet identifiers it has not yet released,
-- and the QoS 1/2 messages in flight to it or waiting for it (bounded per session by
-- mqtt_queue_messages and mqtt_queue_bytes).
CREATE TABLE mqtt_sessions (
    session_key TEXT PRIMARY KEY,           -- <account_id>:<client_id>
    kind TEXT NOT NULL CHECK (kind IN ('device', 'user')),
    account_id TEXT NOT NULL,
    credential TEXT NOT NULL,               -- api_key, certificate or token
    stamp TEXT NOT NULL,                    -- the credential's version when it connected
    subscriptions TEXT NOT NULL,            -- JSON {topic filter: granted QoS}
    incoming_qos2 TEXT NOT NULL,            -- JSON [packet identifier, ...]
    disconnected_at REAL                    -- Unix time; NULL while connected
) WITHOUT ROWID;

CREATE TABLE mqtt_session_messages (
    session_key TEXT NOT NULL REFERENCES mqtt_sessions (session_key) ON DELETE CASCADE,
    seq INTEGER NOT NULL,                   -- delivery order
    packet_id INTEGER,                      -- set for a message in flight
    released INTEGER NOT NULL DEFAULT 0,    -- QoS 2 in flight: PUBREC received
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    qos INTEGER NOT NULL CHECK (qos IN (1, 2)),
    retain INTEGER NOT NULL,
    PRIMARY KEY (session_key, seq)
) WITHOUT ROWID;
