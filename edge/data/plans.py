"""Which index a read walks, within which bounds, and what it checks on every row.

- `order_by` a field (an index field, `created_date`, `last_updated_date`): walk that
  field's index; its own filters bound the walk. An index field's index holds only the
  entries that have the field, so such a list leaves out entries without it.
- the default (path order): walk the primary key over the subtree; but when an index
  field is filtered by equality, walk that field's index at that value instead: still
  path order, and only the matching entries are read.
Every filter is also checked on every row read (`ok`), with the subtree and the caller's
path grants, so the bounds only ever make a walk shorter, never wrong.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from edge.data.query import DataQuery
from storage.data import INDEX_FIELDS
from storage.data_walks import Bound, Condition, Segment, Walk

MAX_PATH_FILTER_SCAN_ITEMS = 10_000


def build(
    group_id: str,
    path: str,
    query: DataQuery,
    rules: list[tuple[str, bool]],
    default: bool,
    texts: tuple[str, ...] = (),
) -> Walk:
    field = _walked_field(query)
    conditions = list(query.filters)
    if field == "path":
        segments = subtree(path)
    else:
        segments = (_segment(field, query.filters),)
        conditions.append(Condition("path", "under", path))
    return Walk(
        group_id,
        field,
        query.desc,
        segments,
        None,
        tuple(c for c in conditions if not (c.field == "path" and c.value == "/")),
        tuple(rules),
        default,
        texts,
        MAX_PATH_FILTER_SCAN_ITEMS + 1,
    )


def after(plan: Walk, key: tuple[Any, str]) -> Walk:
    return replace(plan, after=key)


def subtree(path: str) -> tuple[Segment, ...]:
    """A path, then everything below it: `/a`, then `/a/...` (never `/a-b`)."""
    if path == "/":
        return (Segment(),)
    return (
        Segment(Bound(path, True), Bound(path, True)),
        Segment(Bound(path + "/", False), Bound(path + "0", False)),
    )


def _walked_field(query: DataQuery) -> str:
    if query.order_by != "path":
        return query.order_by
    for item in query.filters:
        if item.op == "eq" and item.field in INDEX_FIELDS:
            return item.field
    return "path"


def _segment(field: str, filters: tuple[Condition, ...]) -> Segment:
    lowers: list[Bound] = []
    uppers: list[Bound] = []
    for item in filters:
        if item.field != field:
            continue
        if item.op in ("eq", "gte", "gt", "between"):
            low = item.value[0] if item.op == "between" else item.value
            lowers.append(Bound(low, item.op != "gt"))
        if item.op in ("eq", "lte", "lt", "between"):
            high = item.value[1] if item.op == "between" else item.value
            uppers.append(Bound(high, item.op != "lt"))
        if item.op == "sw" and item.value:
            lowers.append(Bound(item.value, True))
            uppers.extend(_prefix_end(item.value))
    return Segment(_tightest(lowers, max), _tightest(uppers, min))


def _prefix_end(prefix: str) -> list[Bound]:
    """The first text after every text that starts with `prefix`, if there is one."""
    last = ord(prefix[-1])
    following = last + 1 if last + 1 != 0xD800 else 0xE000
    if following > 0x10FFFF:
        return []
    return [Bound(prefix[:-1] + chr(following), False)]


def _tightest(bounds: list[Bound], pick: Any) -> Bound | None:
    """Any one bound keeps the walk a superset of the matches: take the tightest value,
    inclusive if any bound at that value is (the looser of a tie)."""
    if not bounds:
        return None
    value = pick(b.value for b in bounds)
    return Bound(value, any(b.inclusive for b in bounds if b.value == value))
