"""The site's pulse (docs/pulse.md): one-minute samples of requests, MQTT messages,
sign-in failures, devices online and disk free, per organization and for the site, kept
`pulse_retention_hours` for the console's charts and GET /v2/pulse.

What lives here: the counters in memory that the existing paths add to (`counters.py`:
one dictionary addition per request or sign-in failure, presence transitions, the broker's
message counts through a source shared with billing, `shared.py`), the flush that turns
them into a minute's rows in one transaction and prunes the old ones (`sampler.py`), and
who may read which series (`service.py`).

May import `edge.access` (who is an org admin), `edge.kernel` and `storage`. The broker's
counts, presence's events and the throttle's failures reach it through callables and hooks
`edge.services` and `edge.app` wire; imported by `edge.services`, `edge.app` and `api`.
"""
