"""Operating a site: backup and restore, `edge check`, the self-test, TLS (with the site's
CA, `edge/certificates/`), the release history served at /v2/changelog, health and
readiness, and the figures of GET /metrics. The shell's commands over the services (`edge
admin`, `edge audit list`, `edge device bundle`) live in `edge/shell/`.

May import `edge.kernel`, `edge.auth` (the self-test), `edge.certificates` (TLS, `edge
check`), `edge.data` (the site's signing key), `storage`, and amqtt's client (the
self-test). The relay's and the broker's figures (`metrics.py`) are handed in by
`edge/app.py`. Imported by `edge/cli.py` and `edge/app.py`, which run it, and by `api` for
what it serves (`metrics.py`, `health.py`, `releases.py`).
"""
