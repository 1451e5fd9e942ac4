"""The tenant model: organizations, projects, groups, roles, the caller's own account and
organization, effective settings, and the trash. Users and devices live in
`edge/accounts/`, which imports this room; `orgs.py` alone imports it back (an
organization's first admin is a user row).

May import `edge.access` (every decision), `edge.accounts.user_kind` (see above),
`edge.auth` (tokens, passwords), `edge.delivery` (invitations) and `storage`.
"""
