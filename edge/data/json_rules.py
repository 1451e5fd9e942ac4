"""What a stored JSON value may hold: the data interface's limits, in one place.

- depth: at most MAX_DEPTH nested arrays and objects (a value sits one level inside its
  request body, so a body reader's depth limit should be at least MAX_DEPTH + 2);
- numbers: finite (no NaN, no Infinity: they are not JSON, though Python's reader takes them);
- strings and keys: valid Unicode (no lone surrogates such as "\\ud800");
- size: the value's stored text (compact JSON, UTF-8) at most `max_bytes`
  (setting `data_max_value_bytes`, 1 MiB by default).

The hardened body reader (api/bodies.py) is taking on the first three for every body;
`checked_text` stays the rule for data values either way, and is written so the shared
reader can call it (it needs nothing but the value).
"""

from __future__ import annotations

from typing import Any

from edge.kernel.errors import ValidationError
from storage.data import encode_value

MAX_DEPTH = 64


def checked_text(field: str, value: Any, max_bytes: int) -> str:
    """The value's stored text, once every rule above holds (else a 400 naming `field`)."""
    check_depth(field, value)
    try:
        text = encode_value(value)
    except ValueError:  # allow_nan=False
        raise ValidationError(field, "NaN and Infinity are not JSON numbers") from None
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValidationError(field, "holds a lone surrogate (not valid Unicode)") from None
    if size > max_bytes:
        raise ValidationError(field, f"is {size} bytes as JSON; at most {max_bytes} are allowed")
    return text


def check_depth(field: str, value: Any) -> None:
    """Without recursion, so a value nested a million deep costs a loop, not a crash."""
    if not isinstance(value, dict | list):
        return
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValidationError(field, f"is nested deeper than {MAX_DEPTH} levels")
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
