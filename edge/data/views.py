"""An entry as the interface shows it: the SDK's DataSchema, plus `last_updated_by` and
`last_updated_date` (filterable, so shown). Index fields an entry lacks are left out."""

from __future__ import annotations

from typing import Any

from storage.data import DataEntry


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
