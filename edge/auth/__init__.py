"""Sign-in and credentials: tokens and the principal cache, the sign-in state machine,
MFA (software and SMS), passwords (hashing primitives apart from the flows), reset tokens,
throttling, signing keys and the first staff account.

May import `edge` (errors, clock, ids, fields, principal, audit, config, printable),
`edge.delivery` (to send codes and mail), `edge.tenancy` (orgs and projects for their
sign-in settings, users' login keys and lookups) and `storage`; never `api` nor aiohttp.
"""
