"""Devices: machines that hold API keys and client certificates, act through the same
permission engine as users, and use the embedded MQTT broker within their topic scopes.

May import `edge` (errors, clock, ids, fields, principal), `edge.access`, `edge.auth`,
`edge.ops.ca` (certificates) and `storage`; `embedded_broker` imports this room, never the
reverse.
"""
