"""JSON merge patches (RFC 7396), both ways: applying one, as the server does to a twin's
section, and finding the one that turns a section into another, so the agent can make the
twin's `reported` equal to the local file (a key the file no longer has becomes `null`).
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]


def apply(target: Json, patch: Json) -> Json:
    """`target` with `patch` merged in; neither is changed."""
    out = dict(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = apply(out[key], value)
        elif isinstance(value, dict):
            out[key] = apply({}, value)  # nulls inside a new object mean nothing
        else:
            out[key] = value
    return out


def between(old: Json, new: Json) -> Json:
    """The smallest patch with `apply(old, patch) == new`; empty when they are equal.
    (`new` holding `null` values cannot be reached: a merge patch removes such keys.)"""
    patch: Json = {key: None for key in old if key not in new}
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, dict) and isinstance(before, dict):
            inner = between(before, value)
            if inner:
                patch[key] = inner
        elif key not in old or before != value or type(before) is not type(value):
            patch[key] = value
    return patch
