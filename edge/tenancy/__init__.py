"""The tenant model: organizations, projects, groups, roles, users, the caller's own
account and organization, and profile pictures.

May import `edge.access` (every decision), `edge.auth` (tokens, passwords),
`edge.delivery` (invitations) and `storage`.
"""
