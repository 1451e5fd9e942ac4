"""Device twins (docs/twins.md): each device's document of `desired` state (set by people
and programs), `reported` state (set by the device), when each leaf was last set, and a
version that grows by one with every accepted update.

What lives here: the document's rules, pure functions (`document.py`: JSON merge patch,
metadata, the delta, the limits), the service (`twins.py`: read and update, who may, the
delta sent to the device, the change hook) and the device's MQTT requests (`topics.py`:
`<root>/devices/<device_id>/twin/...`, answered as the broker's server inbox).

May import `edge` (errors, clock, principal, json_text, events), `edge.accounts` (the device and
how the caller stands towards it), `edge.devices` (a device's topics and MQTT clients) and
`storage`; nothing here knows HTTP or the broker.
"""
