"""Rows as dictionaries: the only shape that leaves `storage/`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw

Row = dict[str, Any]
Params = Sequence[Any] | dict[str, Any]


def one(conn: apsw.Connection, sql: str, params: Params = ()) -> Row | None:
    rows = many(conn, sql, params)
    return rows[0] if rows else None


def many(conn: apsw.Connection, sql: str, params: Params = ()) -> list[Row]:
    cursor = conn.execute(sql, params)
    try:
        names = [d[0] for d in cursor.get_description()]
    except apsw.ExecutionCompleteError:  # no rows: the statement already finished
        return []
    return [dict(zip(names, values, strict=True)) for values in cursor]


def scalar(conn: apsw.Connection, sql: str, params: Params = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def insert(conn: apsw.Connection, table: str, values: Row) -> None:
    columns = ", ".join(values)
    marks = ", ".join(f":{name}" for name in values)
    conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", values)


def update(conn: apsw.Connection, table: str, key: str, key_value: Any, values: Row) -> int:
    """Update the named columns of one row; returns the number of rows changed."""
    if not values:
        return 0
    assignments = ", ".join(f"{name} = :{name}" for name in values)
    conn.execute(
        f"UPDATE {table} SET {assignments} WHERE {key} = :__key", {**values, "__key": key_value}
    )
    return conn.changes()
