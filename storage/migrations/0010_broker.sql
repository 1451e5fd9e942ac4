-- The MQTT broker's retained messages: one per topic, the latest published with the
-- retain flag. A QoS 1/2 one is committed before its PUBACK/PUBREC (embedded_broker/).
CREATE TABLE mqtt_retained (
    topic TEXT PRIMARY KEY,
    payload BLOB NOT NULL,
    qos INTEGER NOT NULL CHECK (qos IN (0, 1, 2)),
    updated_at TEXT NOT NULL
) WITHOUT ROWID;
