"""Sign-in and credentials: tokens and the principal cache, the sign-in state machine,
MFA (software and SMS), passwords (hashing primitives apart from the flows), reset tokens,
throttling, signing keys and the first staff account.

May import `edge.kernel` (errors, clock, ids, fields, principal, audit, config,
printable), `edge.delivery` (to send codes and mail), `edge.tenancy` (orgs and projects
for their sign-in settings and token lifetimes) and `storage`; never `api` nor aiohttp.
Imported by `edge.accounts` and `edge.devices` (hashing, tokens, the principal cache),
`edge.ops` (the self-test), `api`, `edge.banner`, `edge.shell` and the composition root.
"""
