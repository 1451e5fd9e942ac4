"""Sign-in challenges in progress, keyed by the hash of their session."""

from __future__ import annotations

import apsw

from storage.rows import Row, insert, one


def create(conn: apsw.Connection, values: Row) -> None:
    insert(conn, "challenges", values)


def get(conn: apsw.Connection, session_hash: str) -> Row | None:
    return one(conn, "SELECT * FROM challenges WHERE session_hash = ?", (session_hash,))


def use(conn: apsw.Connection, session_hash: str) -> bool:
    """Mark the challenge used; False when it already was (a replay lost the race)."""
    conn.execute(
        "UPDATE challenges SET used = 1 WHERE session_hash = ? AND used = 0", (session_hash,)
    )
    return conn.changes() == 1


def purge_expired(conn: apsw.Connection, now_iso: str) -> None:
    conn.execute("DELETE FROM challenges WHERE expires_at < ?", (now_iso,))
