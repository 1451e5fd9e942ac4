"""Commands with replies: a named request sent to a device over MQTT, answered on its reply
topic, the answer returned to the HTTP caller or kept for later (docs/commands.md).

What lives here: the service (`service.py`: send, wait or queue, replies, reading, the
sweep, who may) and the shapes of a command on the wire and in a view (`messages.py`).

May import `edge` (errors, clock, ids, fields, principal, audit), `edge.accounts` (the
device and how the caller stands towards it), `edge.devices` (presence, topics),
`edge.tunnels.notices` (how a notice reaches a device's own sessions) and `storage`;
`edge.services` and `edge.app` import this room.
"""
