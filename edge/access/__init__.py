"""Who may do what: the permission engine, access objects of every target kind (group,
project, role), the rows they are stored in, and what an account holds.

May import `edge` (errors, clock, ids, fields, principal, audit) and `storage`; the tenancy
services call it, never the reverse.
"""
