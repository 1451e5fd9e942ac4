"""Operating a site: backup and restore, `edge check`, the self-test, TLS and the site's
own CA, the release history served at /v2/changelog, and `edge admin` (admin/: everyday
administration through the same services the HTTP handlers call).

May import anything in `edge` and `storage`; nothing imports it but `edge/cli.py` and
`edge/app.py`.
"""
