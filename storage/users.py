"""Accounts inside an organization."""

from __future__ import annotations

import apsw

from storage.rows import Row, insert, one


def create(conn: apsw.Connection, values: Row) -> None:
    insert(conn, "users", values)


def get(conn: apsw.Connection, user_id: str) -> Row | None:
    return one(conn, "SELECT * FROM users WHERE id = ?", (user_id,))


def find_by_login(conn: apsw.Connection, org_id: str, folded: str) -> Row | None:
    return one(
        conn,
        "SELECT * FROM users WHERE org_id = ?1 AND (username_folded = ?2 OR email_folded = ?2)",
        (org_id, folded),
    )


def taken(
    conn: apsw.Connection, org_id: str, username_folded: str, email_folded: str
) -> str | None:
    """Which of username or e-mail already belongs to someone in the org, if either."""
    row = one(
        conn,
        "SELECT username_folded, email_folded FROM users WHERE org_id = ?1"
        " AND (username_folded = ?2 OR email_folded = ?3)",
        (org_id, username_folded, email_folded),
    )
    if row is None:
        return None
    return "username" if row["username_folded"] == username_folded else "email"
