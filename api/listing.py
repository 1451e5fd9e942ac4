"""The list engine's HTTP half: query string in, ListQuery out; Page in, response out.

Operators may be written `field_gte` or `field.gte` (the public SDK sends the dotted
form). Custom attributes filter as `custom_attributes.<key>[.<op>]`. Any parameter the
resource does not offer is a 400 that names it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from aiohttp import web
from multidict import MultiMapping

from api import params
from api.model_fields import DATETIME, Schema
from api.responses import json_response
from edge.kernel import clock, numbers, patterns, search
from edge.kernel.errors import ValidationError
from edge.kernel.listing import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MIN_LIMIT,
    OP_SUFFIXES,
    OPS_BY_KIND,
    CursorCodec,
    Filter,
    ListQuery,
    Page,
    Table,
    split_operator,
)

COMMON = (
    "limit",
    "last_evaluated_key",
    "page",
    "object_count",
    "page_count",
    "order_by",
    "desc",
    "search",
    "search_fields",
    "bust_cache",
)
SEARCH = ("search", "search_fields")
MAX_PAGE = 1_000_000
MAX_PATTERN = 256
_INTEGER = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")


# A filter's JSON Schema, by the kind of the field it filters (for the OpenAPI document).
KIND_TYPES: dict[str, Schema] = {
    "id": {"type": "string"},
    "text": {"type": "string"},
    "bool": {"type": "boolean"},
    # A date (`2026-01-31`: that UTC day) is taken too, but the document says date-time, as
    # the SDK's parameters do: most generators type a parameter with `anyOf` as a plain string.
    "datetime": {
        **DATETIME,
        "description": "A date-time (RFC 3339); a date (YYYY-MM-DD) is taken too: that UTC day",
    },
    "tags": {"type": "string", "pattern": "[^,\\s]", "description": "Tags, comma-separated"},
    "number": {"type": "number"},
    "json": {"type": "string"},
}
_TEXT_OPS = ("regex", "sw", "contains", "contains_any")


@dataclass(frozen=True)
class Listable:
    """What a list endpoint offers: its fields with their kinds, and its JSON columns."""

    resource: str
    kinds: Mapping[str, str]
    json_columns: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()
    default_order: str = "created_date"
    table: Table | None = None  # for the document: what it sorts by and searches
    default_desc: bool = False  # a list read newest first unless `desc=false`
    # False where the rows have no full-text index: `search` is then refused as any unknown
    # parameter is, never answered with an empty list as if nothing matched.
    searchable: bool = True

    def __post_init__(self) -> None:
        """A list that offers `search` must have one: declared wrong, the server does not
        start (tests/api/test_search_everywhere.py walks every list)."""
        if self.searchable and (self.table is None or self.table.fts is None):
            raise TypeError(f"{self.resource}: offers search without a full-text index")

    def common(self) -> tuple[str, ...]:
        """The list engine's parameters this list takes (a route's `query`, for the document
        and for `parse`)."""
        return COMMON if self.searchable else tuple(n for n in COMMON if n not in SEARCH)

    def query_types(self) -> dict[str, Schema]:
        """The filters on its fields, each operator as its own parameter (`name_gte`), and
        what `order_by` and `search_fields` may name."""
        found = filter_types(self.kinds.items())
        if self.table is not None:
            found["order_by"] = order_by(sortable(self.table), self.table.json_columns)
            if self.searchable:
                found["search_fields"] = names_of(self.table.fts_columns)
        return found


def sortable(table: Table) -> list[str]:
    return [n for n, f in table.fields.items() if f.sortable and f.kind not in ("tags", "json")]


def order_by(names: Iterable[str], json_columns: Iterable[str] = ()) -> Schema:
    """One of the fields, or a key of a JSON column (`custom_attributes.age`)."""
    choices: list[Schema] = [{"type": "string", "enum": list(names)}]
    for column in json_columns:
        choices.append({"type": "string", "pattern": f"^{column}\\.[A-Za-z0-9_\\-]{{1,64}}$"})
    return choices[0] if len(choices) == 1 else {"anyOf": choices}


def names_of(choices: Iterable[str]) -> Schema:
    """Names drawn from `choices`, comma-separated."""
    alternatives = "|".join(re.escape(c) for c in choices)
    if not alternatives:
        return {"type": "string", "maxLength": 0}
    item = f"\\s*({alternatives})\\s*"
    return {"type": "string", "pattern": f"^({item}(,{item})*)?$"}


def filter_types(kinds: Iterable[tuple[str, str]]) -> dict[str, Schema]:
    found: dict[str, Schema] = {}
    for name, kind in kinds:
        for op in OPS_BY_KIND.get(kind, ()) if kind in KIND_TYPES else ():
            key = name if op == "eq" else f"{name}_{op}"
            found[key] = _op_type(kind, op)
    return found


def _op_type(kind: str, op: str) -> Schema:
    if op == "regex":
        return {"type": "string", "format": "regex", "maxLength": MAX_PATTERN}
    if kind == "tags" or op not in _TEXT_OPS:
        return KIND_TYPES[kind]
    return KIND_TYPES["text"]


def parse(
    query: MultiMapping[str], listable: Listable, codec: CursorCodec
) -> tuple[ListQuery, dict[str, str]]:
    """Parse a list request; returns the query and the resource's own extra parameters."""
    single = params.single_values(query)
    common = {k: v for k, v in single.items() if k in listable.common()}
    extras = {k: v for k, v in single.items() if k in listable.extras}
    filters = [
        _filter(k, v, listable)
        for k, v in single.items()
        if k not in common and k not in listable.extras
    ]
    limit = (
        params.integer("limit", common["limit"], MIN_LIMIT, MAX_LIMIT)
        if "limit" in common
        else DEFAULT_LIMIT
    )
    base = ListQuery(
        limit=limit,
        order_by=_order_by(common, listable.default_order),
        desc=params.flag(common, "desc", listable.default_desc),
        filters=tuple(filters),
        search=search.checked(common.get("search", "")),
        search_fields=_names(common.get("search_fields", "")),
        object_count=params.flag(common, "object_count"),
        page_count=params.flag(common, "page_count"),
    )
    return _position(base, common, listable.resource, codec), extras


def respond(
    list_key: str, page: Page, query: ListQuery, codec: CursorCodec, resource: str
) -> web.Response:
    body: dict[str, Any] = {}
    if query.counts_only:
        total = page.total or 0
        if query.object_count:
            body["object_count"] = total
        if query.page_count:
            body["page_count"] = math.ceil(total / query.limit)
        return json_response(body)
    body[list_key] = page.rows
    body.update(page.extra)
    if page.more and page.last is not None:
        body["last_evaluated_key"] = codec.encode(resource, query, page.last)
    return json_response(body)


def _position(
    base: ListQuery, common: Mapping[str, str], resource: str, codec: CursorCodec
) -> ListQuery:
    key, page = common.get("last_evaluated_key"), common.get("page")
    if key and page:
        raise ValidationError(None, "page and last_evaluated_key cannot be used together")
    if key:
        return _replace(base, after=codec.decode(resource, base, key))
    if page:
        number = params.integer("page", page, 1, MAX_PAGE)
        return _replace(base, offset=(number - 1) * base.limit)
    return base


def _replace(query: ListQuery, **changes: Any) -> ListQuery:
    return replace(query, **changes)


def _order_by(common: Mapping[str, str], default: str) -> str:
    """The field named, else the list's default. Named empty (`?order_by=`) is a 400: the
    document's enum of fields has no empty name."""
    if "order_by" not in common:
        return default
    name = common["order_by"].strip()
    if not name:
        raise ValidationError("order_by", "must name a field to sort by")
    return name


def _names(raw: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in raw.split(",") if n.strip())


def _filter(key: str, raw: str, listable: Listable) -> Filter:
    column = key.split(".", 1)[0]
    if column in listable.json_columns and "." in key:
        return _json_filter(key, raw)
    if key in SEARCH:
        raise ValidationError(key, "is not offered: this list has no full-text search")
    name, op = split_operator(key, listable.kinds)
    if name is None:
        raise ValidationError(key, "is not a query parameter of this list")
    kind = listable.kinds[name]
    if op not in OPS_BY_KIND[kind]:
        raise ValidationError(key, f"'{op}' does not apply to {name}")
    return Filter(name, op, _value(key, raw, kind, op))


def _json_filter(key: str, raw: str) -> Filter:
    parts = key.split(".")
    op = parts[-1] if len(parts) == 3 and parts[-1] in OP_SUFFIXES else "eq"
    field = ".".join(parts[:2])
    if len(parts) > (3 if op != "eq" else 2) or not re.fullmatch(r"[A-Za-z0-9_\-]{1,64}", parts[1]):
        raise ValidationError(key, "is not a valid custom attribute filter")
    if op not in OPS_BY_KIND["json"]:
        raise ValidationError(key, f"'{op}' does not apply to custom attributes")
    return Filter(field, op, _json_value(key, raw, op))


def _json_value(key: str, raw: str, op: str) -> Any:
    if op == "regex":
        return _pattern(key, raw)
    if op in ("sw", "contains"):
        return raw
    return _candidates(raw) if op == "eq" else _literal(raw)


def _value(key: str, raw: str, kind: str, op: str) -> Any:
    if op == "regex":
        return _pattern(key, raw)
    if kind == "bool":
        return params.boolean(key, raw)
    if kind == "datetime":
        return _moment(key, raw, op)
    if kind == "tags":
        return _tags(key, raw.split(","))
    if kind == "number":
        return numbers.filter_value(key, raw)
    return raw


def _moment(key: str, raw: str, op: str) -> Any:
    try:
        bounds = clock.day_bounds(raw)
        return _day_value(bounds, op) if bounds else clock.iso(clock.parse(raw))
    except (ValueError, OverflowError):  # year 1 with an offset, 9999-12-31: out of range
        raise ValidationError(key, "must be an ISO 8601 date or datetime") from None


def _day_value(bounds: tuple[str, str], op: str) -> Any:
    """A bare date is its whole UTC day: `gt` a day means after it, `lt` a day before it."""
    start, end = bounds
    return {"eq": bounds, "gte": start, "lt": start, "gt": end, "lte": end}[op]


def _tags(key: str, items: Iterable[str]) -> tuple[str, ...]:
    tags = tuple(t.strip() for t in items if t.strip())
    if not tags:
        raise ValidationError(key, "must name at least one tag")
    return tags


def _pattern(key: str, raw: str) -> str:
    return patterns.checked(key, raw, MAX_PATTERN)


def _literal(raw: str) -> Any:
    """A custom attribute value as JSON would type it: true/false, a number, else text."""
    lowered = raw.strip().lower()
    if lowered in ("true", "false"):
        return 1 if lowered == "true" else 0
    if _INTEGER.fullmatch(raw.strip()) and abs(int(raw)) < 2**63:
        return int(raw)
    if _NUMBER.fullmatch(raw.strip()):
        return float(raw)
    return raw


def _candidates(raw: str) -> Any:
    """What `eq` may match: the typed value and the text as sent ('01234' is text and 1234)."""
    typed = _literal(raw)
    return raw if typed == raw else (typed, raw)
