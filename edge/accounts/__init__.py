"""Accounts: users and devices, the two kinds of account an organization has.

What both kinds share lives here once: how a caller stands towards an account
(`standing.py`), what the caller sees of it (`views.py`), the value rules of the fields
they share (`rules.py`), writing rows and the access objects a body sets (`writes.py`),
narrowing a list (`lists.py`), and the service flow (`service.py`: open, require, read,
list, delete, the audit events of account changes, and the reach rule: access is given
only to an account the caller can read). A kind supplies only what differs (`kind.py`
says what): the user kind (`users.py`: passwords, logins, phone numbers, MFA standing,
what a GET keeps between requests in `user_facts.py`, profile pictures in
`pictures.py`) and the device kind (`devices.py`: owners, `iot_scopes`, descriptive
fields, API keys and certificates), as `edge/access/kinds.py` does for access objects.

May import `edge.kernel` (errors, clock, ids, fields, principal, listing, audit),
`edge.access`, `edge.auth` (password hashing, ending sessions), `edge.delivery`
(invitations), `edge.devices` (a device's keys, credentials and topic rules),
`edge.certificates` (its certificates), `edge.tenancy` (orgs, effective settings, the trash)
and `storage`. Imported by the composition root (`edge/services.py`, which also hands the
device kind a device's open tunnels and `edge.tenancy.orgs` the user kind's `first_admin`),
`api`, `edge.shell` and `edge.tunnels` (a device's standing).
"""
