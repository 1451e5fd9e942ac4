"""Devices: machines that hold API keys and client certificates, act through the same
permission engine as users, and use the embedded MQTT broker within their topic scopes.

What lives here: the device service (`devices.py`, with its rules, views and writes in
`device_*.py`), API keys and the issued MQTT credentials (`credentials.py`), the API-key
fast path that turns a key into a principal (`keys.py`), batched `last_seen`
(`last_seen.py`), topic rights (`topics.py`), and the registry the broker asks
(`mqtt_clients.py` is the contract, `directory.py` its implementation).

May import `edge` (errors, clock, ids, fields, principal, listing, audit), `edge.access`,
`edge.auth`, `edge.ops.ca` (certificates), `edge.tenancy` (orgs, effective settings, the
trash, the value rules and access writes accounts share), `edge.tunnels.views` (a device's
open tunnels in its views) and `storage`; `embedded_broker` imports this room, never the
reverse.
"""
