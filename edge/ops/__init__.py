"""Operating a site: backup and restore, `edge check`, the self-test, TLS and the site's
own CA, the release history served at /v2/changelog, and `edge admin` (admin/: everyday
administration through the same services the HTTP handlers call).

May import anything in `edge` and `storage`, and amqtt's client (the self-test). Imported
by `edge/cli.py` and `edge/app.py`, which run it; by `api` for what it serves (`metrics.py`,
`health.py`, `releases.py`); and, for the site CA (`ca.py`), by `edge.devices` and
`embedded_broker`.
"""
