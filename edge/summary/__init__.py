"""The overview of a site as one caller may see it (GET /v2/summary, the console's first
page): counts taken through the same lists, with the same permission scopes, that the
caller's own list requests use, plus what an org holds, for its admins.

May import `edge.accounts` and `edge.tenancy` (their list services), `edge.access` (who is
an org admin), `edge.kernel` and `storage`. Imported by `edge.services` and `api`.
"""
