"""The outbox: mail and SMS waiting to be delivered."""

from __future__ import annotations

import apsw

from storage.rows import Row, insert, many


def enqueue(conn: apsw.Connection, message: Row) -> None:
    insert(conn, "outbox", message)


def by_purpose(conn: apsw.Connection, purpose: str) -> list[Row]:
    return many(conn, "SELECT * FROM outbox WHERE purpose = ? ORDER BY created_date", (purpose,))
