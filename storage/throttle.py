"""Failed sign-in attempts, kept in the database so every process sees the same counts."""

from __future__ import annotations

import apsw

from storage.rows import Row, many, one, scalar


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
    """Forget counts that are no longer waiting and saw no failure for a day, and records
    of account-wide lockouts older than 90 days."""
    conn.execute(
        "DELETE FROM sign_in_failures WHERE blocked_until < ?1"
        " AND updated_date < strftime('%Y-%m-%dT%H:%M:%fZ', ?1, '-1 day')",
        (now_iso,),
    )
    conn.execute(
        "DELETE FROM sign_in_lockouts"
        " WHERE created_date < strftime('%Y-%m-%dT%H:%M:%fZ', ?1, '-90 days')",
        (now_iso,),
    )


def clear_prefixed(conn: apsw.Connection, key: str, prefix: str) -> int:
    """Delete `key` and every key that starts with `prefix`; how many rows went."""
    conn.execute(
        "DELETE FROM sign_in_failures WHERE key = ?1 OR substr(key, 1, length(?2)) = ?2",
        (key, prefix),
    )
    return int(conn.changes())


def count_prefixed(conn: apsw.Connection, prefix: str) -> int:
    return int(
        scalar(
            conn,
            "SELECT count(*) FROM sign_in_failures WHERE substr(key, 1, length(?1)) = ?1",
            (prefix,),
        )
    )


def record_lockout(
    conn: apsw.Connection, account: str, failures: int, addresses: int, until: str, now: str
) -> None:
    conn.execute(
        "INSERT INTO sign_in_lockouts (account, failures, addresses, blocked_until, created_date)"
        " VALUES (?, ?, ?, ?, ?)",
        (account, failures, addresses, until, now),
    )


def lockouts_since(conn: apsw.Connection, since: str) -> list[Row]:
    return many(
        conn,
        "SELECT * FROM sign_in_lockouts WHERE created_date >= ? ORDER BY created_date",
        (since,),
    )
