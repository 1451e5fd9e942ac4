"""Storage: the SQLite schema, migrations and queries, and the blob store. Imports neither
`api` nor `edge`; imported by `edge` (and by `embedded_broker` for its session record only,
docs/architecture.md)."""
