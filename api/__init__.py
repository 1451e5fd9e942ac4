"""HTTP only: routes, request parsing and validation, response shaping, error mapping.

May import `edge/services.py` (the services a handler reaches), every service room of
`edge` (`edge.access`, `edge.accounts`, `edge.auth`, `edge.billing`, `edge.data`,
`edge.delivery`, `edge.devices`, `edge.files`, `edge.ops`, `edge.tenancy`, `edge.tunnels`)
and `edge.kernel`; never `storage`. Imported by `edge/app.py` alone.
"""
