"""Storage: the SQLite schema, migrations and queries. Imports neither `api` nor `edge`."""
