"""Profile pictures: kept apart from the account rows, which are read far more often."""

from __future__ import annotations

import apsw

from storage.rows import Row, one


def put(conn: apsw.Connection, account_id: str, content_type: str, data: bytes, now: str) -> None:
    conn.execute(
        "INSERT INTO pictures (account_id, content_type, data, updated_date) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (account_id) DO UPDATE SET content_type = excluded.content_type,"
        " data = excluded.data, updated_date = excluded.updated_date",
        (account_id, content_type, data, now),
    )


def get(conn: apsw.Connection, account_id: str) -> Row | None:
    return one(conn, "SELECT * FROM pictures WHERE account_id = ?", (account_id,))


def delete(conn: apsw.Connection, account_id: str) -> bool:
    conn.execute("DELETE FROM pictures WHERE account_id = ?", (account_id,))
    return conn.changes() == 1
