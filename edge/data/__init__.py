"""The data interface: per-group JSON documents at paths, their index fields, lists of a
subtree (filters, the scan cap, continuation keys), bulk jobs, signed entries, and the
erasure of data whose group is gone (docs/data.md).

May import `edge.kernel` (errors, clock, principal, listing, patterns, numbers),
`edge.access` (every permission decision) and `storage`; never `api` nor aiohttp. Imported
by `api`, `edge.ops` (the site's signing key) and the composition root.
"""
