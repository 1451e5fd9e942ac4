"""The tenant model: organizations, projects, groups, roles, the caller's own account and
organization, effective settings, the trash, and the e-mail templates of orgs and projects.
Users and devices live in `edge/accounts/`, which imports this room and never the reverse
(an organization's first admin is made by the user kind, handed to `Orgs` by
`edge/services.py`).

May import `edge.kernel`, `edge.access` (every decision), `edge.delivery` (templating,
for e-mail templates) and `storage`. Imported by `edge.auth`, `edge.accounts`,
`edge.files`, `edge.billing`, `edge.tunnels`, `api` and the composition root.
"""
