"""Data paths: what a valid path is, and its one spelling (docs/data.md, "Paths").

A leading '/' is added when missing and one trailing '/' is dropped, so `a/b`, `/a/b` and
`/a/b/` name the same entry. Segments are whole: never empty, never '.' or '..' (URLs
resolve those before the server sees them), no control characters, no lone surrogates.
"""

from __future__ import annotations

import re

from edge.access.values import MAX_PATH
from edge.errors import ValidationError

ROOT = "/"
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def normalize(raw: str, field: str = "path") -> str:
    path = raw if raw.startswith("/") else "/" + raw
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    if len(path) > MAX_PATH:
        raise ValidationError(field, f"must be at most {MAX_PATH} characters")
    if path != ROOT:
        _check_segments(field, path)
    return path


def _check_segments(field: str, path: str) -> None:
    for segment in path[1:].split("/"):
        if not segment:
            raise ValidationError(field, f"'{path}' has an empty segment")
        if segment in (".", ".."):
            raise ValidationError(field, "'.' and '..' are not path segments")
    if _CONTROL.search(path):
        raise ValidationError(field, "must not hold control characters")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(field, "holds a lone surrogate (not valid Unicode)") from None


def entry_path(raw: str, field: str = "path") -> str:
    """A path an entry may live at: any valid path but the root."""
    path = normalize(raw, field)
    if path == ROOT:
        raise ValidationError(field, "name an entry below '/'")
    return path
