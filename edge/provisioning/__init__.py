"""Zero-touch provisioning (docs/provisioning.md): claims that admins make (`claims.py`,
with the template a device gets, `template.py`, and the QR code of the secret, `qr.py`),
whether a claim's maker still holds the rights it gives (`maker.py`) and enrollment itself
(`enrollment.py`: a device presents a claim and a CSR and becomes a device, over REST or
EST).

May import `edge.accounts` (a new device's row and access, as devices are made, and its
certificate recorded), `edge.access` (who may give access to a group), `edge.auth` (the
sign-in throttle), `edge.certificates` (the CSR's rules, the site CA that signs it),
`edge.devices` (API keys, topics), `edge.tenancy` (projects and settings), `edge.kernel`
and `storage`. Imported by `edge.services` and `api`.
"""
