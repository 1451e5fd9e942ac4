"""An entry as the interface shows it: the SDK's DataSchema, plus `last_updated_by` and
`last_updated_date` (filterable, so shown). Index fields an entry lacks are left out.

`present_stored` shows an entry from its stored columns: the value and the history lists
go out as the JSON text they are stored as (orjson fragments), which a point GET would
otherwise decode only for the answer to encode again (a third of its handler's time).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orjson import Fragment

from storage.data import COLUMN_AT, INDEX_FIELDS, DataEntry

_INDEX_AT = tuple((name, COLUMN_AT[name]) for name in INDEX_FIELDS)


def present(entry: DataEntry, verified: bool = False) -> dict[str, Any]:
    return {
        "path": entry.path,
        "value": entry.value,
        "created_by": entry.created_by,
        "created_date": entry.created_date,
        "last_updated_by": entry.last_updated_by,
        "last_updated_date": entry.last_updated_date,
        "updated_by_list": entry.updated_by_list,
        "updated_date_list": entry.updated_date_list,
        "revision": entry.revision,
        "verified": verified,
        **entry.index_fields(),
    }


def present_stored(row: Sequence[Any]) -> dict[str, Any]:
    """`present(decode(row))`, without decoding: the same answer, once encoded."""
    at = COLUMN_AT
    shown = {
        "path": row[at["path"]],
        "value": Fragment(row[at["value"]]),
        "created_by": row[at["created_by"]],
        "created_date": row[at["created_date"]],
        "last_updated_by": row[at["last_updated_by"]],
        "last_updated_date": row[at["last_updated_date"]],
        "updated_by_list": Fragment(row[at["updated_by_list"]]),
        "updated_date_list": Fragment(row[at["updated_date_list"]]),
        "revision": row[at["revision"]],
        "verified": False,
    }
    for name, i in _INDEX_AT:
        if row[i] is not None:
            shown[name] = row[i]
    return shown
