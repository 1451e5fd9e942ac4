"""The embedded MQTT broker (docs/mqtt.md): amqtt's broker, subclassed where a site broker
needs more (authentication before sessions, per-account client IDs, bounded queues, the
lower QoS, durable retained messages, revocation) and with our own message path.

May import `edge.kernel` (config), `edge.certificates` (the TLS listener's certificate),
`edge.devices` (the device registry's contract in `edge.devices.mqtt_clients`), amqtt, and
from `storage` only the record of a stored session (`storage.mqtt_sessions`:
`StoredSession`, `StoredMessage`); never `api`, nor a query: `edge/app.py` hands it the
registry and the stores of retained messages and sessions.
Imported by `edge/app.py` alone (docs/architecture.md, "Who may import whom").
"""
