"""A file as the interface shows it (FileSchema). Index fields that were never set are
left out, never null; the ETag is shown without quotes."""

from __future__ import annotations

from typing import Any

from edge.files.values import INDEX_FIELDS
from storage.records import FileEntry


def present(entry: FileEntry) -> dict[str, Any]:
    out: dict[str, Any] = {
        "path": entry.path,
        "filename": entry.filename,
        "size": entry.size,
        "etag": entry.etag,
        "revision": entry.revision,
        "uploaded_date": entry.uploaded_date,
        "created_by": entry.created_by or "",
        "created_date": entry.created_date,
        "last_updated_by": entry.last_updated_by or entry.created_by or "",
        "last_updated_date": entry.last_updated_date,
        "updated_by_list": entry.updated_by_list,
        "updated_date_list": entry.updated_date_list,
    }
    if entry.content_type is not None:
        out["content_type"] = entry.content_type
    for name in INDEX_FIELDS:
        value = getattr(entry, name)
        if value is not None:
            out[name] = value
    return out
