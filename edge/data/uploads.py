"""What a write carries: the value (checked, and its stored text) and the index fields.

Index fields (docs/data.md, "Index fields"): `unicode_1` .. `unicode_10` hold text;
booleans and numbers sent there are stored as their JSON spelling (`true`, `12.5`).
`number_1` and `number_2` hold finite numbers (integers within 64 bits). On PUT and POST a
field not sent is absent; on PATCH it keeps its value, and `null` clears it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from edge.data.json_rules import checked_text
from edge.kernel import numbers
from edge.kernel.errors import ValidationError
from storage.data import INDEX_FIELDS, NUMBER_FIELDS, UNICODE_FIELDS

MAX_INDEX_TEXT = 1024
Index = dict[str, Any]


@dataclass(frozen=True)
class Upload:
    """A write's content. `has_value` is False only for a PATCH that leaves the value."""

    value: Any = None
    text: str = "null"
    has_value: bool = True
    index: Index = field(default_factory=dict)  # fields sent; None clears (PATCH)


def upload(body: Mapping[str, Any], max_bytes: int, *, partial: bool = False) -> Upload:
    index = {name: index_value(name, body[name]) for name in INDEX_FIELDS if name in body}
    if "value" not in body:
        if not partial:
            raise ValidationError("value", "is required")
        return Upload(has_value=False, index=index)
    value = body["value"]
    return Upload(value, checked_text("value", value, max_bytes), True, index)


def index_value(name: str, raw: Any) -> str | int | float | None:
    if raw is None:
        return None
    if name in UNICODE_FIELDS:
        return _text(name, raw)
    if name in NUMBER_FIELDS:
        return numbers.index_value(name, raw)
    raise ValidationError(name, "is not an index field")


def _text(name: str, raw: Any) -> str:
    """Text as sent, or the JSON spelling of a boolean or number (the specification:
    `unicode_*` coerced to strings), any integer included: 2**64 is "18446744073709551616",
    not a refusal (only number fields hold 64 bits)."""
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, float) and not math.isfinite(raw):
        raise ValidationError(name, "NaN and Infinity are not JSON numbers")
    if isinstance(raw, int | float):
        raw = json.dumps(raw)
    if not isinstance(raw, str):
        raise ValidationError(name, "must be a string, a number or a boolean")
    if len(raw) > MAX_INDEX_TEXT:
        raise ValidationError(name, f"must be at most {MAX_INDEX_TEXT} characters")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(name, "holds a lone surrogate (not valid Unicode)") from None
    return raw
