"""Data paths: what a valid path is, and its one spelling (docs/data.md, "Paths").

A leading '/' is added when missing and one trailing '/' is dropped, so `a/b`, `/a/b` and
`/a/b/` name the same entry. Segments are whole: never empty, never '.' or '..' (URLs
resolve those before the server sees them), no control characters, no lone surrogates.
"""

from __future__ import annotations

from edge.access.paths import segment_problem
from edge.access.values import MAX_PATH
from edge.kernel.errors import ValidationError

ROOT = "/"


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
    problem = segment_problem(path)
    if problem is not None:
        raise ValidationError(field, problem)


def entry_path(raw: str, field: str = "path") -> str:
    """A path an entry may live at: any valid path but the root."""
    path = normalize(raw, field)
    if path == ROOT:
        raise ValidationError(field, "name an entry below '/'")
    return path
