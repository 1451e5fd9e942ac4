"""Data entries: per-group JSON documents keyed by path (docs/data.md).

Point reads and writes by (group_id, path); the records of a page by their paths; and
walks (storage/data_walks.py) that read one index in order. Values are stored as compact
JSON text and handed back decoded; `encode_value` is the one encoding, so what is signed,
measured and stored is the same text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from storage.records import Record
from storage.rows import Tx, scalar

UNICODE_FIELDS = tuple(f"unicode_{i}" for i in range(1, 11))
NUMBER_FIELDS = ("number_1", "number_2")
INDEX_FIELDS = (*UNICODE_FIELDS, *NUMBER_FIELDS)
Number = int | float


@dataclass(frozen=True, slots=True)
class DataEntry(Record):
    """One entry. `value` is the decoded JSON value (any JSON type)."""

    group_id: str
    path: str
    value: Any
    unicode_1: str | None
    unicode_2: str | None
    unicode_3: str | None
    unicode_4: str | None
    unicode_5: str | None
    unicode_6: str | None
    unicode_7: str | None
    unicode_8: str | None
    unicode_9: str | None
    unicode_10: str | None
    number_1: Number | None
    number_2: Number | None
    created_by: str
    created_date: str
    last_updated_by: str
    last_updated_date: str
    updated_by_list: list[str]
    updated_date_list: list[str]
    revision: int
    signature: str

    def index_fields(self) -> dict[str, str | Number]:
        """The index fields this entry has (a missing one is None, and left out)."""
        found = {name: getattr(self, name) for name in INDEX_FIELDS}
        return {name: value for name, value in found.items() if value is not None}


assert tuple(DataEntry.__dataclass_fields__)[-1] == "signature"  # `_encode` sets it last


@dataclass(frozen=True, slots=True)
class EntryHistory(Record):
    """What a PUT keeps of the entry it replaces: no value, so replacing a large value never
    decodes the old one; its index fields as stored, so the write can leave the indexes of
    unchanged fields alone (`update`)."""

    created_by: str
    created_date: str
    updated_by_list: list[str]
    updated_date_list: list[str]
    revision: int
    index: tuple[str | Number | None, ...] = ()  # in INDEX_FIELDS order


COLUMNS = tuple(DataEntry.__dataclass_fields__)
_SELECT = ", ".join(COLUMNS)
_JSON_COLUMNS = frozenset(("value", "updated_by_list", "updated_date_list"))
_JSON_AT = tuple(i for i, name in enumerate(COLUMNS) if name in _JSON_COLUMNS)
_SAVE = f"INSERT OR REPLACE INTO data ({_SELECT}) VALUES ({', '.join('?' for _ in COLUMNS)})"


def encode_value(value: Any) -> str:
    """The stored text of a value: compact, key order kept, non-ASCII as itself."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _decode(values: Sequence[Any]) -> DataEntry:
    out = list(values)
    for i in _JSON_AT:
        out[i] = json.loads(out[i])
    return DataEntry(*out)


def _encode(entry: DataEntry, value_text: str | None, signature: str | None = None) -> list[Any]:
    out = [getattr(entry, name) for name in COLUMNS]
    if signature is not None:
        out[-1] = signature
    for i in _JSON_AT:
        if i != _VALUE_AT:
            out[i] = encode_list(out[i])
        else:
            out[i] = encode_value(out[i]) if value_text is None else value_text
    return out


def encode_list(texts: list[str]) -> str:
    """`encode_value` of a list of strings (the update history), by orjson: the same text
    for every string (compared over the code points), in a fifth of the time."""
    return orjson.dumps(texts).decode()


_VALUE_AT = COLUMNS.index("value")
_HISTORY = ", ".join((*tuple(EntryHistory.__dataclass_fields__)[:-1], *INDEX_FIELDS))
# What an update of an existing entry always sets: every column but the key, the creation
# (kept by every write) and the index fields (set only when they change).
_ALWAYS = tuple(
    name
    for name in COLUMNS
    if name not in ("group_id", "path", "created_by", "created_date", *INDEX_FIELDS)
)
COLUMN_AT = {name: i for i, name in enumerate(COLUMNS)}  # a column's place in a stored row
_ALWAYS_AT = tuple(COLUMN_AT[name] for name in _ALWAYS)
_UPDATES: dict[tuple[str, ...], str] = {}  # SQL by the index fields an update changes


def get(conn: Tx, group_id: str, path: str) -> DataEntry | None:
    row = conn.execute(
        f"SELECT {_SELECT} FROM data WHERE group_id = ? AND path = ?", (group_id, path)
    ).fetchone()
    return None if row is None else _decode(row)


def get_stored(conn: Tx, group_id: str, path: str) -> tuple[Any, ...] | None:
    """The entry's columns as stored (COLUMNS order, JSON columns as their text), for
    answers that send the stored text as it is instead of decoding and encoding it again."""
    sql = f"SELECT {_SELECT} FROM data WHERE group_id = ? AND path = ?"
    row: tuple[Any, ...] | None = conn.execute(sql, (group_id, path)).fetchone()
    return row


def decode(row: Sequence[Any]) -> DataEntry:
    """An entry from its stored columns (`get_stored`)."""
    return _decode(row)


def history(conn: Tx, group_id: str, path: str) -> EntryHistory | None:
    """The entry's creation, history and revision (None when there is no entry)."""
    sql = f"SELECT {_HISTORY} FROM data WHERE group_id = ? AND path = ?"
    row = conn.execute(sql, (group_id, path)).fetchone()
    if row is None:
        return None
    return _history_of(row)


def _history_of(values: Sequence[Any]) -> EntryHistory:
    """An EntryHistory from its `_HISTORY` columns."""
    # Lists of strings: orjson reads them exactly as `json` does, in a third of the time.
    lists = orjson.loads(values[2]), orjson.loads(values[3])
    return EntryHistory(values[0], values[1], *lists, values[4], tuple(values[5:]))


_STATE = (
    "SELECT g.num_history, g.require_delete_permission_to_put_data, "
    + ", ".join(f"d.{name}" for name in _HISTORY.split(", "))
    + " FROM groups AS g LEFT JOIN data AS d ON d.group_id = g.id AND d.path = ?"
    + " WHERE g.id = ?"
)


def put_state(
    conn: Tx, group_id: str, path: str
) -> tuple[tuple[int, bool], EntryHistory | None] | None:
    """`group_rules` and `history` in one statement (None when the group is gone): what a
    single PUT reads before it writes."""
    row = conn.execute(_STATE, (path, group_id)).fetchone()
    if row is None:
        return None
    rules = (int(row[0]), bool(row[1]))
    if row[2] is None:  # created_by is never NULL: no entry at the path
        return rules, None
    return rules, _history_of(row[2:])


def get_page(
    conn: Tx, group_id: str, paths: Sequence[str], budget: int, *, first_free: bool = True
) -> tuple[dict[str, DataEntry], int]:
    """The entries at these paths (a page's rows), in this order, until their stored values
    would pass `budget` bytes, and the bytes they hold: the entry that would is left out,
    unless it is the first and `first_free` (one is always read, whatever its size). The
    sizes come first (`octet_length` reads a row's header, not its value), then only the
    values that fit: the values held at once are the budget, whatever the page's `limit`."""
    sizes = value_sizes(conn, group_id, paths)
    kept: list[str] = []
    used = 0
    for path in paths:
        if path not in sizes:
            continue
        if (kept or not first_free) and used + sizes[path] > budget:
            break
        used += sizes[path]
        kept.append(path)
    found = {e.path: e for e in map(_decode, _at_paths(conn, _SELECT, group_id, kept))}
    return {path: found[path] for path in kept}, used


def value_sizes(conn: Tx, group_id: str, paths: Sequence[str]) -> dict[str, int]:
    """The stored size of the value at each of these paths that has an entry."""
    return dict(_at_paths(conn, "path, octet_length(value)", group_id, paths))


def _at_paths(conn: Tx, columns: str, group_id: str, paths: Sequence[str]) -> Iterator[Any]:
    """`columns` of the rows at these paths, 500 paths a statement, in no particular order."""
    for start in range(0, len(paths), 500):
        chunk = paths[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        sql = f"SELECT {columns} FROM data WHERE group_id = ? AND path IN ({marks})"
        yield from conn.execute(sql, (group_id, *chunk))


def exists(conn: Tx, group_id: str, path: str) -> bool:
    sql = "SELECT 1 FROM data WHERE group_id = ? AND path = ?"
    return conn.execute(sql, (group_id, path)).fetchone() is not None


def save(
    conn: Tx, entry: DataEntry, value_text: str | None = None, *, signature: str | None = None
) -> None:
    """Insert the entry, or replace the one at its path. `value_text`: the value's
    `encode_value` text when the caller has it already (not encoded again); `signature`:
    stored in place of the entry's own (the writer signs the entry it composed)."""
    conn.execute(_SAVE, _encode(entry, value_text, signature))


def update(
    conn: Tx,
    entry: DataEntry,
    before: EntryHistory | DataEntry,
    value_text: str | None = None,
    *,
    signature: str | None = None,
) -> None:
    """Replace the entry at its path, which holds `before`, keeping its creation.

    Sets only the index fields that change (an UPDATE leaves alone every index whose
    columns it does not set), where `save`'s INSERT OR REPLACE deletes and inserts the
    row in all of them: a PUT that repeats its index fields writes two b-trees, not six.
    """
    old = before.index if isinstance(before, EntryHistory) else _index_of(before)
    changed = tuple(
        name
        for name, was in zip(INDEX_FIELDS, old, strict=True)
        if not _same(getattr(entry, name), was)
    )
    sql = _UPDATES.get(changed)
    if sql is None:
        sets = ", ".join(f"{name} = ?" for name in (*_ALWAYS, *changed))
        sql = _UPDATES[changed] = f"UPDATE data SET {sets} WHERE group_id = ? AND path = ?"
    row = _encode(entry, value_text, signature)
    params = [row[i] for i in _ALWAYS_AT]
    params += [row[COLUMN_AT[name]] for name in changed]
    conn.execute(sql, [*params, entry.group_id, entry.path])


def _index_of(entry: DataEntry) -> tuple[str | Number | None, ...]:
    return tuple(getattr(entry, name) for name in INDEX_FIELDS)


def _same(new: Any, old: Any) -> bool:
    """Equal as stored: 7 and 7.0 are different values of a number field (and sign
    differently), so the type must match too; so are 0.0 and -0.0, which compare equal."""
    if new != old or type(new) is not type(old):
        return False
    return (
        not isinstance(new, float)
        or new != 0.0
        or math.copysign(1.0, new) == math.copysign(1.0, old)
    )


def group_rules(conn: Tx, group_id: str) -> tuple[int, bool] | None:
    """What a write needs of its group: `num_history` and whether PUT needs delete rights
    (None when the group is gone). Two columns, not the whole group record."""
    sql = "SELECT num_history, require_delete_permission_to_put_data FROM groups WHERE id = ?"
    row = conn.execute(sql, (group_id,)).fetchone()
    return None if row is None else (int(row[0]), bool(row[1]))


def delete(conn: Tx, group_id: str, path: str) -> bool:
    conn.execute("DELETE FROM data WHERE group_id = ? AND path = ?", (group_id, path))
    return conn.changes() == 1


def _subtree(path: str) -> tuple[str, tuple[Any, ...]]:
    """The entries at a path and below it, as a condition on the primary key."""
    if path == "/":
        return "1", ()
    return "(path = ? OR (path > ? AND path < ?))", (path, path + "/", path + "0")


def count_below(conn: Tx, group_id: str, path: str, at_most: int) -> int:
    """How many entries a path and its subtree hold, counting no further than `at_most`."""
    where, params = _subtree(path)
    sql = f"SELECT count(*) FROM (SELECT 1 FROM data WHERE group_id = ? AND {where} LIMIT ?)"
    return int(scalar(conn, sql, (group_id, *params, at_most)))


def delete_below(conn: Tx, group_id: str, path: str, at_most: int) -> int:
    """Delete up to `at_most` entries of a path and its subtree; returns how many went."""
    where, params = _subtree(path)
    conn.execute(
        "DELETE FROM data WHERE group_id = ? AND path IN"
        f" (SELECT path FROM data WHERE group_id = ? AND {where} LIMIT ?)",
        (group_id, group_id, *params, at_most),
    )
    return conn.changes()


# -- erasing the data of groups that are gone -----------------------------------------
def groups_to_erase(conn: Tx, at_most: int = 16) -> list[str]:
    rows = conn.execute("SELECT group_id FROM data_erasures LIMIT ?", (at_most,))
    return [str(row[0]) for row in rows]


def erase_some(conn: Tx, group_id: str, at_most: int) -> int:
    """Erase up to `at_most` entries of a group that is gone; once none are left, the
    group leaves the queue. Returns how many entries went."""
    gone = delete_below(conn, group_id, "/", at_most)
    if gone < at_most:
        conn.execute("DELETE FROM data_erasures WHERE group_id = ?", (group_id,))
    return gone


def any_signature(conn: Tx) -> str | None:
    """One entry's signature (`<key id>.<digest>`), to prove the signing key is the one
    that made them."""
    found = scalar(conn, "SELECT signature FROM data LIMIT 1")
    return None if found is None else str(found)
