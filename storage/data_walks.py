"""Walking the data of a group in index order: the SQL half of every list of entries.

A walk reads one index in order: the primary key (path order) or the index of one field
(that field's order, then path), inside the bounds of its segments, after a continuation
key. Every row the index yields comes back, with `ok` saying whether it passed the
conditions the index could not serve (the other filters, the subtree, the caller's path
grants). The caller counts what it reads and stops (edge/data/pages.py enforces the scan
cap), so the work a request can cause is bounded by rows read, whatever its filters.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from storage.rows import Tx, scalar

WALKS = ("path", *(f"unicode_{i}" for i in range(1, 11)), "number_1", "number_2")
WALKS += ("created_date", "last_updated_date")
FILTERS = (*WALKS[1:], "created_by", "last_updated_by")
_COMPARE = {"eq": "=", "gte": ">=", "lte": "<=", "gt": ">", "lt": "<"}


@dataclass(frozen=True)
class Bound:
    value: Any
    inclusive: bool


@dataclass(frozen=True)
class Segment:
    """A range of the walked field, in ascending order; None is open."""

    lower: Bound | None = None
    upper: Bound | None = None


@dataclass(frozen=True)
class Condition:
    """A filter the walked index does not serve: `field op value`.

    Ops: eq, gte, lte, gt, lt, sw (starts with), contains, between (a pair), and `under`
    (field 'path': the path or below it)."""

    field: str
    op: str
    value: Any


@dataclass(frozen=True)
class Walk:
    group_id: str
    field: str = "path"
    desc: bool = False
    segments: tuple[Segment, ...] = (Segment(),)
    after: tuple[Any, str] | None = None  # (field value, path) of the last row read
    conditions: tuple[Condition, ...] = ()
    # The caller's path grants below the walked subtree: (path, allowed), longest
    # first, and what holds everywhere else (edge/access/paths.py PathGrants.rules).
    rules: tuple[tuple[str, bool], ...] = ()
    default: bool = True
    texts: tuple[str, ...] = ()  # columns handed back for filters applied in Python
    limit: int = 10_001

    @property
    def filtered(self) -> bool:
        """Whether any row may fail `ok` (else every row read is a match)."""
        return bool(self.conditions or self.rules or not self.default)


@dataclass(frozen=True)
class Walked:
    path: str
    sort: Any  # the walked field's value (the path itself on a path walk)
    ok: bool
    texts: tuple[Any, ...] = field(default=())


def walk(conn: Tx, plan: Walk) -> Iterator[Walked]:
    """Rows of the walk in order; stop consuming whenever you like."""
    segments = reversed(plan.segments) if plan.desc else plan.segments
    for segment in segments:
        yield from _segment(conn, plan, segment)


def count(conn: Tx, plan: Walk) -> int:
    """How many rows the walk would read, and pass: one SQL count, no row handed back."""
    total = 0
    ok, ok_params = _ok(plan)
    for segment in plan.segments:
        where, params = _where(plan, segment)
        sql = f"SELECT count(*) FROM data{_indexed(plan)} WHERE {where} AND {ok}"
        total += int(scalar(conn, sql, (*params, *ok_params)))
    return total


def _segment(conn: Tx, plan: Walk, segment: Segment) -> Iterator[Walked]:
    where, params = _where(plan, segment)
    ok, ok_params = _ok(plan)
    texts = "".join(f", {name}" for name in plan.texts)
    direction = "DESC" if plan.desc else "ASC"
    order = "path" if plan.field == "path" else f"{plan.field} {direction}, path"
    sql = (
        f"SELECT path, {plan.field}, {ok}{texts} FROM data{_indexed(plan)} WHERE {where}"
        f" ORDER BY {order} {direction} LIMIT ?"
    )
    cursor = conn.execute(sql, (*ok_params, *params, plan.limit))
    try:  # a reader that stops early closes the cursor here, ending its read at once
        for row in cursor:
            yield Walked(row[0], row[1], bool(row[2]), tuple(row[3:]))
    finally:
        cursor.close()


def _indexed(plan: Walk) -> str:
    return "" if plan.field == "path" else f" INDEXED BY data_by_{plan.field}"


def _where(plan: Walk, segment: Segment) -> tuple[str, list[Any]]:
    clauses, params = ["group_id = ?"], [plan.group_id]
    if plan.field != "path":
        clauses.append(f"{plan.field} IS NOT NULL")
    low, high = segment.lower, segment.upper
    start, end = (high, low) if plan.desc else (low, high)
    _side(clauses, params, plan, start, first=True)
    _side(clauses, params, plan, end, first=False)
    return " AND ".join(clauses), params


def _side(
    clauses: list[str], params: list[Any], plan: Walk, bound: Bound | None, *, first: bool
) -> None:
    """One end of a segment. At the walk's start the continuation key replaces the bound
    when it is as tight (the index then seeks straight to the key)."""
    name, desc = plan.field, plan.desc
    if first and plan.after is not None and _key_is_tighter(plan, bound):
        value, path = plan.after
        mark = "<" if desc else ">"
        if name == "path":
            clauses.append(f"path {mark} ?")
            params.append(path)
        else:
            clauses.append(f"({name}, path) {mark} (?, ?)")
            params.extend((value, path))
        return
    if bound is None:
        return
    below = desc if first else not desc  # this end limits the field from above
    op = ("<" if below else ">") + ("=" if bound.inclusive else "")
    clauses.append(f"{name} {op} ?")
    params.append(bound.value)


def _key_is_tighter(plan: Walk, bound: Bound | None) -> bool:
    """Whether the continuation key starts the walk at or past `bound`.

    When it is not (a key from before a bound the client has since tightened), the bound
    is used alone: every row after it is also after the key. `ok` re-checks every filter
    anyway, so either choice reads a superset of the rows left to match."""
    if bound is None or plan.after is None:
        return True
    value, path = plan.after
    key = path if plan.field == "path" else value
    try:
        if key == bound.value:
            return bound.inclusive or plan.field == "path"
        return bool(key < bound.value) if plan.desc else bool(key > bound.value)
    except TypeError:  # a key of another type than the bound: use both
        return True


def _ok(plan: Walk) -> tuple[str, list[Any]]:
    parts: list[str] = []
    params: list[Any] = []
    for item in plan.conditions:
        sql, more = _condition(item)
        parts.append(sql)
        params.extend(more)
    if plan.rules or not plan.default:
        sql, more = _grants(plan.rules, plan.default)
        parts.append(sql)
        params.extend(more)
    if not parts:
        return "1", []
    return "coalesce((" + ") AND (".join(parts) + "), 0)", params


def _condition(item: Condition) -> tuple[str, Sequence[Any]]:
    name, op, value = item.field, item.op, item.value
    if op == "under":
        return _covers(value)
    if op == "sw":  # as bytes: SQLite's length() and substr() of text stop at a NUL
        prefix = str(value).encode()
        return f"substr(CAST({name} AS BLOB), 1, ?) = ?", (len(prefix), prefix)
    if op == "contains":
        return f"instr({name}, ?) > 0", (value,)
    if op == "between":
        return f"{name} BETWEEN ? AND ?", tuple(value)
    return f"{name} {_COMPARE[op]} ?", (value,)


def _covers(path: str) -> tuple[str, Sequence[Any]]:
    """The path and everything below it, on whole segments."""
    if path == "/":
        return "1", ()
    return "(path = ? OR (path > ? AND path < ?))", (path, path + "/", path + "0")


def _grants(rules: Sequence[tuple[str, bool]], default: bool) -> tuple[str, list[Any]]:
    """Whether the caller may read a row: the longest grant path covering it decides."""
    if not rules:
        return ("1" if default else "0"), []
    cases: list[str] = []
    params: list[Any] = []
    for path, allowed in rules:
        sql, more = _covers(path)
        cases.append(f"WHEN {sql} THEN {int(allowed)}")
        params.extend(more)
    return f"CASE {' '.join(cases)} ELSE {int(default)} END", params
