"""Device tunnels: reach a service on a device (SSH, a local web page) through the server,
while the device only ever connects out (docs/tunnels.md).

What lives here: the tunnel service (`tunnels.py`: open, list, get, close, who may), the
rules for services and timeouts (`rules.py`), tokens (`tokens.py`), the Tunnel view
(`views.py`, also used by the device views), the notices and the mail (`notices.py`), and
the relay (`relay.py`: live tunnels, streams, limits, expiry), which moves bytes between
two `Pipe`s and knows nothing of HTTP. The client programs of `edge tunnel` live in
`edge/tunnel_clients/`, which the server never imports.

May import `edge.kernel` (errors, clock, ids, principal, audit, config), `edge.accounts`
(the device and how the caller stands towards it), `edge.devices.topics` (a device's
topics, for its notices), `edge.devices.presence` (a connected agent makes its device
online), `edge.tenancy.settings`, `edge.delivery.messages` and `storage`.
Imported by `api` and the composition root, which hands `views.open_for` (a device's open
tunnels) to the device kind and the relay's figures to the metrics.
"""
