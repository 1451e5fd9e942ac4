"""Numbers from clients: an index field's value, and a filter's, checked one way everywhere
(data, files and lists).

SQLite binds integers within 64 bits as integers and anything else as a double, and binds
NaN as NULL; JSON allows integers of any size. So an integer within 64 bits stays an
integer (as a double, 2**53 + 1 would lose its last digit and miss the entry it names),
any other number must be a finite double, and NaN and Infinity are refused.
"""

from __future__ import annotations

import math
from typing import Any

from edge.kernel.errors import ValidationError

INT64 = 2**63


def index_value(name: str, raw: Any) -> int | float:
    """A number index field as a JSON body gives it: stored as given, or refused."""
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise ValidationError(name, "must be a number")
    if isinstance(raw, float) and not math.isfinite(raw):
        raise ValidationError(name, "NaN and Infinity are not JSON numbers")
    if isinstance(raw, int) and not -INT64 <= raw < INT64:
        raise ValidationError(name, "must fit in 64 bits")
    return raw


def filter_value(name: str, raw: Any) -> int | float:
    """A number filter as the index compares it, from query text (or a JSON number): an
    integer beyond 64 bits is compared as the nearest double."""
    value: Any = raw
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise ValidationError(name, "must be a number")
    if isinstance(raw, str):
        try:
            value = int(raw)
        except ValueError:
            try:
                value = float(raw)
            except ValueError:
                raise ValidationError(name, "must be a number") from None
    if isinstance(value, int):
        if -INT64 <= value < INT64:
            return value
        try:
            value = float(value)
        except OverflowError:
            raise ValidationError(name, "must be a finite number") from None
    if not math.isfinite(value):
        raise ValidationError(name, "must be a finite number")
    return float(value)
