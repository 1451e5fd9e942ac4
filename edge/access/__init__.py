"""Who may do what: the permission engine, access objects of every target kind (group,
project, role), the rows they are stored in, and what an account holds.

May import `edge.kernel` (errors, clock, ids, fields, principal, audit) and `storage`.
Imported by every room that decides who may: `edge.tenancy`, `edge.accounts`,
`edge.devices`, `edge.data`, `edge.files`; by `api` (the data routes' path rules) and the
composition root (`edge/services.py`).
"""
