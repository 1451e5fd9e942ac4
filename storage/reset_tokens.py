"""Password reset tokens, stored only as their SHA-256 (edge/auth/reset_tokens.py makes them)."""

from __future__ import annotations

import apsw

from storage.rows import Row, insert, one


def create(conn: apsw.Connection, values: Row) -> None:
    insert(conn, "reset_tokens", values)


def take(conn: apsw.Connection, token_hash: str) -> Row | None:
    """The token's row, deleted in the same transaction: a token is redeemed once."""
    row = one(conn, "SELECT * FROM reset_tokens WHERE token_hash = ?", (token_hash,))
    if row is not None:
        conn.execute("DELETE FROM reset_tokens WHERE token_hash = ?", (token_hash,))
    return row


def peek(conn: apsw.Connection, token_hash: str) -> Row | None:
    return one(conn, "SELECT * FROM reset_tokens WHERE token_hash = ?", (token_hash,))


def forget_user(conn: apsw.Connection, user_id: str) -> None:
    """Drop every outstanding token of a user (their password just changed)."""
    conn.execute("DELETE FROM reset_tokens WHERE user_id = ?", (user_id,))


def purge_expired(conn: apsw.Connection, now_iso: str) -> int:
    conn.execute("DELETE FROM reset_tokens WHERE expires_at < ?", (now_iso,))
    return conn.changes()
