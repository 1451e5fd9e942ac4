"""Files: per-group object storage on local disk, with an index and presigned URLs that
point at this server (docs/files.md).

Lives here: file paths and index fields (`values`), S3 ETags (`etags`), presigned URLs
(`signing`), who may do what with a group's files (`rights`), quotas, the file index
(`entries`), uploads (`uploads`) and the sweeps that keep disk and index in step (`sweeps`).
May import `edge.kernel` (clock, ids, errors, listing, numbers, patterns, principal),
`edge.access`, `edge.tenancy.settings` and `storage`; never aiohttp, never apsw. Imported
by `api` and the composition root.
"""
