"""Sign-in sessions: what makes a token valid or revoked."""

from __future__ import annotations

import apsw

from storage.rows import Row, insert, one


def create(conn: apsw.Connection, values: Row) -> None:
    insert(conn, "sessions", values)


def get(conn: apsw.Connection, session_id: str) -> Row | None:
    return one(conn, "SELECT * FROM sessions WHERE id = ?", (session_id,))


def find_by_refresh(conn: apsw.Connection, refresh_hash: str) -> Row | None:
    return one(conn, "SELECT * FROM sessions WHERE refresh_hash = ?", (refresh_hash,))


def revoke(conn: apsw.Connection, session_id: str) -> None:
    conn.execute("UPDATE sessions SET revoked = 1 WHERE id = ?", (session_id,))


def revoke_account(conn: apsw.Connection, account_id: str) -> None:
    conn.execute("UPDATE sessions SET revoked = 1 WHERE account_id = ?", (account_id,))


def revoke_accounts(conn: apsw.Connection, account_ids: list[str]) -> None:
    for account_id in account_ids:
        revoke_account(conn, account_id)


def purge_expired(conn: apsw.Connection, now_iso: str) -> int:
    conn.execute("DELETE FROM sessions WHERE refresh_expires_at < ?", (now_iso,))
    return conn.changes()
