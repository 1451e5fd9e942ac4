-- 0026: retained MQTT messages on reserved topics go. Under a device's namespace,
-- `<root>/devices/<device_id>/` (the root one level or two), `tunnels`, `commands` and
-- `twin` and everything below them are reserved (embedded_broker/acl.py, RESERVED): the
-- server's notices, commands, twin replies and deltas, and the device's own requests,
-- none of which is ever retained. A message retained there before those topics were
-- reserved (by a user tool or another device whose rights covered them) would reach the
-- device as if the server had sent it (a forged command or delta); the broker skips such
-- messages, and this deletes them. Other retained messages are untouched.
WITH
    -- the topic after its first level (root of one level) and after its second (two)
    after_root (topic, rest) AS (
        SELECT topic, substr(topic, instr(topic, '/') + 1) FROM mqtt_retained
        WHERE instr(topic, '/') > 0
    ),
    readings (topic, rest) AS (
        SELECT topic, rest FROM after_root
        UNION ALL
        SELECT topic, substr(rest, instr(rest, '/') + 1) FROM after_root
        WHERE instr(rest, '/') > 0
    ),
    -- "<device_id>/<below>" after "devices/"
    namespaces (topic, rest) AS (
        SELECT topic, substr(rest, 9) FROM readings WHERE substr(rest, 1, 8) = 'devices/'
    ),
    below (topic, rest) AS (
        SELECT topic, substr(rest, instr(rest, '/') + 1) FROM namespaces
        WHERE instr(rest, '/') > 0
    )
DELETE FROM mqtt_retained WHERE topic IN (
    SELECT topic FROM below
    WHERE rest IN ('tunnels', 'commands', 'twin')
        OR substr(rest, 1, 8) = 'tunnels/'
        OR substr(rest, 1, 9) = 'commands/'
        OR substr(rest, 1, 5) = 'twin/'
);
