"""Failed sign-in attempts, kept in the database so every process sees the same counts."""

from __future__ import annotations

import apsw

from storage.rows import Row, one


def get(conn: apsw.Connection, key: str) -> Row | None:
    return one(conn, "SELECT * FROM sign_in_failures WHERE key = ?", (key,))


def record(conn: apsw.Connection, key: str, failures: int, blocked_until: str, now: str) -> None:
    conn.execute(
        "INSERT INTO sign_in_failures (key, failures, blocked_until, updated_date)"
        " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (key) DO UPDATE"
        " SET failures = ?2, blocked_until = ?3, updated_date = ?4",
        (key, failures, blocked_until, now),
    )


def clear(conn: apsw.Connection, key: str) -> None:
    conn.execute("DELETE FROM sign_in_failures WHERE key = ?", (key,))


def purge_before(conn: apsw.Connection, now_iso: str) -> None:
    """Forget counts that are no longer waiting and saw no failure for a day."""
    conn.execute(
        "DELETE FROM sign_in_failures WHERE blocked_until < ?1"
        " AND updated_date < strftime('%Y-%m-%dT%H:%M:%fZ', ?1, '-1 day')",
        (now_iso,),
    )
