"""The parameters of a data read, from a query string or a bulk GET job (docs/data.md).

One parser for both: query-string values arrive as text, job values as JSON types. The
operator of a filter may be written `field_op` or `field.op` (the SDK sends the dotted
form). Anything not offered is a 400 naming it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from edge.kernel import clock, numbers, patterns, search
from edge.kernel.errors import ValidationError
from edge.kernel.listing import DEFAULT_LIMIT, MAX_LIMIT, MIN_LIMIT, split_operator
from storage.data import NUMBER_FIELDS as NUMBER_FIELDS  # api/data.py documents these
from storage.data import UNICODE_FIELDS as UNICODE_FIELDS
from storage.data_walks import WALKS as WALKS
from storage.data_walks import Condition

FLAGS = ("cascade", "paths_only", "object_count", "page_count", "verify", "desc", "bust_cache")
TEXTS = ("order_by", "last_evaluated_key", "path_filter", "search", "search_fields", "limit")
OPS: dict[str, tuple[str, ...]] = {
    **{name: ("eq", "sw", "contains", "gte", "lte") for name in UNICODE_FIELDS},
    **{name: ("eq", "gt", "gte", "lt", "lte") for name in NUMBER_FIELDS},
    "created_by": ("eq",),
    "last_updated_by": ("eq",),
    "created_date": ("eq", "gte", "lte", "gt", "lt"),
    "last_updated_date": ("eq", "gte", "lte", "gt", "lt"),
}
SEARCHABLE = ("path", *UNICODE_FIELDS)
MAX_PATTERN = 256
_SUFFIXES = ("contains", "gte", "lte", "gt", "lt", "sw")  # no regex, no contains_any
_TRUE, _FALSE = ("", "true", "1", "yes"), ("false", "0", "no")


@dataclass(frozen=True)
class DataQuery:
    cascade: bool = False
    paths_only: bool = False
    object_count: bool = False
    page_count: bool = False
    verify: bool = False
    desc: bool = False
    limit: int = DEFAULT_LIMIT
    order_by: str = "path"
    key: str | None = None  # last_evaluated_key as sent (JSON text)
    path_filter: str | None = None
    search: str | None = None
    search_fields: tuple[str, ...] = ()
    filters: tuple[Condition, ...] = ()

    @property
    def counts_only(self) -> bool:
        return self.object_count or self.page_count


DEFAULT = DataQuery()


def parse(params: Mapping[str, Any]) -> DataQuery:
    if not params:
        return DEFAULT  # the common point read: nothing to parse
    values: dict[str, Any] = {}
    filters: list[Condition] = []
    for key, raw in params.items():
        if raw is None:
            continue
        if key in FLAGS:
            values[key] = flag(key, raw)
        elif key in TEXTS:
            values[key] = raw
        else:
            filters.append(_filter(key, raw))
    values.pop("bust_cache", None)  # accepted and ignored: reads are never cached
    return DataQuery(
        **{k: v for k, v in values.items() if k in FLAGS},
        limit=_limit(values.get("limit")),
        order_by=_order(values.get("order_by")),
        key=_key(values.get("last_evaluated_key")),
        path_filter=_pattern(values.get("path_filter")),
        search=search.checked(_text("search", values.get("search"))),
        search_fields=_fields(values.get("search_fields")),
        filters=tuple(filters),
    )


def flag(name: str, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ValidationError(name, "must be true or false")


def _limit(raw: Any) -> int:
    if raw is None:
        return DEFAULT_LIMIT
    try:
        value = raw if isinstance(raw, int) and not isinstance(raw, bool) else int(str(raw))
    except ValueError:
        raise ValidationError("limit", "must be a whole number") from None
    if not MIN_LIMIT <= value <= MAX_LIMIT:
        raise ValidationError("limit", f"must be between {MIN_LIMIT} and {MAX_LIMIT}")
    return value


def _text(name: str, raw: Any) -> str:
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise ValidationError(name, "must be a string")
    return raw.strip()


def _order(raw: Any) -> str:
    name = _text("order_by", raw) or "path"
    if name not in WALKS:
        raise ValidationError(
            "order_by", f"cannot sort by '{name}' (choose from {', '.join(WALKS)})"
        )
    return name


def _key(raw: Any) -> str | None:
    """The continuation key as JSON text; a bulk job may give it as an object."""
    if raw is None or raw == "":
        return None
    return raw if isinstance(raw, str) else json.dumps(raw)


def _pattern(raw: Any) -> str | None:
    text = _text("path_filter", raw)
    if not text:
        return None
    return patterns.checked("path_filter", text, MAX_PATTERN)


def _fields(raw: Any) -> tuple[str, ...]:
    names = tuple(n.strip() for n in _text("search_fields", raw).split(",") if n.strip())
    for name in names:
        if name not in SEARCHABLE:
            choices = ", ".join(SEARCHABLE)
            raise ValidationError(
                "search_fields", f"'{name}' is not searchable (choose from {choices})"
            )
    return names


def _filter(key: str, raw: Any) -> Condition:
    name, op = split_operator(key, OPS, _SUFFIXES)
    if name is None:
        raise ValidationError(key, "is not a query parameter of this operation")
    if op not in OPS[name]:
        raise ValidationError(key, f"'{op}' does not apply to {name}")
    value = _value(key, name, op, raw)
    if isinstance(value, tuple):  # a bare date: its whole day
        return Condition(name, "between", value)
    return Condition(name, op, value)


def _value(key: str, name: str, op: str, raw: Any) -> Any:
    if name in NUMBER_FIELDS:
        return numbers.filter_value(key, raw)
    if not isinstance(raw, str):
        raise ValidationError(key, "must be a string")
    if name.endswith("_date"):
        return _moment(key, raw, op)
    return raw


def _moment(key: str, raw: str, op: str) -> Any:
    """A bare date is its whole UTC day (eq matches the day, gt is after it, ...)."""
    try:
        bounds = clock.day_bounds(raw)
        if bounds is None:
            return clock.iso(clock.parse(raw))
    except (ValueError, OverflowError):
        raise ValidationError(key, "must be an ISO 8601 date or datetime") from None
    start, end = bounds
    return {"eq": bounds, "gte": start, "lt": start, "gt": end, "lte": end}[op]
