"""The one reader of JSON sent by clients, with its limits in one place.

Python's `json` accepts things that later fail far from the parser: nesting deep enough to
exhaust the recursion limit (a RecursionError, so a 500), `NaN` and `Infinity` (which no
JSON standard allows and SQLite's JSON functions refuse), numbers that overflow to infinity
(`1e999`), and `\\ud800` escapes that decode to a lone surrogate, which cannot be encoded
as UTF-8 when the row is written. Every JSON body is read here instead, so each of those is
a 400 naming the field, before any service runs and so before anything is written.

Limits (docs/conventions.md repeats them):
- MAX_BYTES: the largest JSON body, 1 MiB (the general `max_body_bytes` still caps uploads);
- MAX_DEPTH: objects and arrays nested at most 64 deep, counting the top level as 1.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from edge.kernel.errors import TooLarge, ValidationError

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 64
BODY = "body"
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# What in a JSON text can decode to a lone surrogate: one itself, or a \u escape of one.
_MAY_HOLD_SURROGATE = re.compile(r"[\ud800-\udfff]|\\u[dD][89a-fA-F]")


def parse(
    raw: bytes, *, field: str = BODY, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH
) -> Any:
    """The value of a JSON document, or ValidationError (TooLarge past `max_bytes`). Routes
    that carry larger documents (data values) pass their own limits."""
    if len(raw) > max_bytes:
        raise TooLarge(too_large(max_bytes))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(field, "is not valid UTF-8") from None
    return loads(text, field=field, max_depth=max_depth)


def loads(text: str, *, field: str = BODY, max_depth: int = MAX_DEPTH) -> Any:
    """Like `parse`, for JSON that arrived as text (a query parameter, a form field)."""
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise _too_deep(field) from None
    except _NotFinite:
        raise ValidationError(field, "NaN and Infinity are not valid JSON numbers") from None
    except ValueError:  # JSONDecodeError, or an integer of more than 4300 digits
        raise ValidationError(field, "is not valid JSON") from None
    if _may_need_check(text, max_depth):
        check(value, field=field, max_depth=max_depth)
    return value


def _may_need_check(text: str, max_depth: int) -> bool:
    """Whether the value of `text` may break a rule `check` enforces. A text with no
    surrogate nor escape of one, and fewer brackets than `max_depth`, cannot: two scans
    in C instead of a walk of the value in Python, which a device's every MQTT request
    (a job update, a twin update) paid (#31)."""
    if text.count("{") + text.count("[") > max_depth:
        return True
    return _MAY_HOLD_SURROGATE.search(text) is not None


def check(value: Any, *, field: str = BODY, max_depth: int = MAX_DEPTH) -> None:
    """Refuse nesting past MAX_DEPTH and lone surrogates anywhere, keys included.

    Iterative, so a value that is itself too deep cannot exhaust the stack while checked.
    """
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, str):
            _text(item, path or field)
        elif isinstance(item, dict | list):
            if depth > max_depth:
                raise _too_deep(field, max_depth)
            stack.extend(_children(item, depth, path))


def _children(item: dict[str, Any] | list[Any], depth: int, path: str) -> list[Any]:
    if isinstance(item, list):
        return [(v, depth + 1, _join(path, str(i))) for i, v in enumerate(item)]
    children = []
    for key, v in item.items():
        _text(key, _join(path, "(key)"))
        children.append((v, depth + 1, _join(path, key)))
    return children


def _text(value: str, where: str) -> None:
    if _SURROGATE.search(value):
        raise ValidationError(where, "contains an unpaired UTF-16 surrogate (not valid Unicode)")


def too_large(limit: int) -> str:
    return f"Request body is larger than {limit} bytes"


def _join(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


def _too_deep(field: str, max_depth: int = MAX_DEPTH) -> ValidationError:
    return ValidationError(field, f"is nested more than {max_depth} levels deep")


class _NotFinite(Exception):
    pass


def _no_constant(name: str) -> float:
    raise _NotFinite(name)


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _NotFinite(text)
    return number


# One decoder for every text: `json.loads` with these hooks builds a new one per call,
# which cost more than decoding a device's small request (two per job execution, #31).
_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)
