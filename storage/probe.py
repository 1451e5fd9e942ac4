"""A self-check of the SQLite build this executable carries: FTS5 and JSON1 must work."""

from __future__ import annotations

import apsw


def sqlite_features() -> str:
    """A description of the SQLite in use; raises when FTS5 or JSON1 is missing."""
    conn = apsw.Connection(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
        conn.execute("INSERT INTO t VALUES ('edge selftest')")
        hits = conn.execute("SELECT count(*) FROM t WHERE t MATCH 'self*'").fetchone()
        value = conn.execute("SELECT json_extract('{\"a\": 7}', '$.a')").fetchone()
    finally:
        conn.close()
    if hits != (1,) or value != (7,):
        raise RuntimeError("SQLite lacks FTS5 or JSON1")
    return f"SQLite {apsw.sqlite_lib_version()} (FTS5, JSON1)"
