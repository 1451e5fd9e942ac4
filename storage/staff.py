"""Staff accounts: the operators of this installation."""

from __future__ import annotations

import apsw

from storage.rows import Row, insert, one, scalar


def count(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT count(*) FROM staff"))


def create(conn: apsw.Connection, values: Row) -> None:
    insert(conn, "staff", values)


def find_by_login(conn: apsw.Connection, folded: str) -> Row | None:
    return one(
        conn, "SELECT * FROM staff WHERE username_folded = ?1 OR email_folded = ?1", (folded,)
    )


def get(conn: apsw.Connection, staff_id: str) -> Row | None:
    return one(conn, "SELECT * FROM staff WHERE id = ?", (staff_id,))


def first(conn: apsw.Connection) -> Row:
    row = one(conn, "SELECT * FROM staff ORDER BY created_date, id LIMIT 1")
    assert row is not None, "a site always has a staff account once opened"
    return row
