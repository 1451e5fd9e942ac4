"""Devices as machines: what they sign in with and how they use the embedded MQTT broker.
A device as an account (its service, rules, views, standing and lists) lives in
`edge/accounts/` with users.

What lives here: API keys and the issued MQTT credentials (`credentials.py`), the API-key
fast path that turns a key into a principal (`keys.py`), batched `last_seen`
(`last_seen.py`), failed MQTT sign-ins (`auth_failures.py`), topic rights (`topics.py`),
the pace of a device's HTTP writes (`write_rate.py`), and the registry the broker asks
(`mqtt_clients.py` is the contract, `directory.py` its implementation).

May import `edge.kernel` (errors, clock, audit, fields, principal), `edge.access` (the
permission engine), `edge.auth` (keys into principals), `edge.certificates` and `storage`.
Imported by `edge.accounts`, `edge.tunnels`, `embedded_broker`, `api` and the composition
root, never the reverse.
"""
