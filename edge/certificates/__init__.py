"""The site's own certificate authority (`ca.py`): the CA in `<data>/ca/`, the server
certificate it issues for HTTPS and MQTT over TLS, and the client certificates of devices
(`SiteCa.sign_client`, the one signer); `issuing.py` holds the one set of rules a device's
certificate signing request meets (enrollment, renewal, EST); `revocation.py` the CRL.
It stands below every room that uses it, so that authenticating a device never passes
through operations (`edge/ops`).

May import `edge.kernel` (the clock) and `storage.layout` (where the files live), and the
`cryptography` package. Imported by `edge.devices` (checking a device's certificate),
`edge.accounts` (issuing one), `edge.provisioning` (signing a CSR at enrollment),
`edge.ops` (TLS, `edge check`), `embedded_broker` (the TLS listener) and the composition
root.
"""
