"""Operating a site: backup and restore, `edge check`, the self-test, TLS and the site's
own CA, and the release history served at /v2/changelog.

May import anything in `edge` and `storage`; nothing imports it but `edge/cli.py` and
`edge/app.py`.
"""
