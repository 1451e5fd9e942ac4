"""Reading and writing rows: dictionaries for small internal tables, typed records
(storage/records.py) for the tenant model.

`Tx` is the handle a read or a write runs on. Services pass it from `Database.read`,
`scan` and `write` to storage functions and never use it themselves, so they depend on
no database driver: another backend would hand them its own handle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import apsw

from storage.records import Codec

R = TypeVar("R")
Row = dict[str, Any]
Params = Sequence[Any] | dict[str, Any]
Tx = apsw.Connection


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
    conn.execute(_insert_sql(table, tuple(values)), values)


_INSERTS: dict[tuple[str, tuple[str, ...]], str] = {}
MAX_INSERTS = 256  # far more shapes than the code has; past it, built each time


def _insert_sql(table: str, names: tuple[str, ...]) -> str:
    """The INSERT of these columns, built once per (table, columns): a record's insert
    always names the same columns, and the writer runs it for every new row."""
    key = (table, names)
    sql = _INSERTS.get(key)
    if sql is None:
        marks = ", ".join(f":{name}" for name in names)
        sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})"
        if len(_INSERTS) < MAX_INSERTS:
            _INSERTS[key] = sql
    return sql


def update(conn: apsw.Connection, table: str, key: str, key_value: Any, values: Row) -> int:
    """Update the named columns of one row; returns the number of rows changed."""
    if not values:
        return 0
    assignments = ", ".join(f"{name} = :{name}" for name in values)
    conn.execute(
        f"UPDATE {table} SET {assignments} WHERE {key} = :__key", {**values, "__key": key_value}
    )
    return conn.changes()


def record(conn: Tx, codec: Codec[R], where: str, params: Params = ()) -> R | None:
    """One record of the codec's table matching `where`, or None."""
    found = conn.execute(f"SELECT {codec.select} FROM {codec.table} WHERE {where}", params)
    values = found.fetchone()
    return None if values is None else codec.decode(values)


def records(conn: Tx, codec: Codec[R], sql: str, params: Params = ()) -> list[R]:
    """Records from a query whose columns are `codec.select` (in that order)."""
    return [codec.decode(values) for values in conn.execute(sql, params)]


def insert_record(conn: Tx, codec: Codec[R], value: R) -> None:
    insert(conn, codec.table, codec.encode(value))


def update_record(conn: Tx, codec: Codec[R], key_value: str, changes: Row) -> bool:
    """Change the named columns (Python values; JSON dumped here) of the row with this ID."""
    return update(conn, codec.table, "id", key_value, codec.changes(changes)) == 1
