"""The list engine's SQL half: filters, full-text search, ordering and keyset pages.

Every list endpoint describes its table once (a `Table`: the fields it may filter and
sort on, their kinds and SQL expressions, its FTS5 table) and passes a `ListQuery`.
Only whitelisted field expressions ever reach SQL; every value is a bound parameter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import apsw

from storage import search
from storage.records import Codec
from storage.rows import scalar

KINDS = ("id", "text", "bool", "datetime", "tags", "number", "json")
OPS_BY_KIND: dict[str, tuple[str, ...]] = {
    "id": ("eq",),
    "text": ("eq", "regex", "sw", "contains"),
    "bool": ("eq",),
    "datetime": ("eq", "gte", "lte", "gt", "lt"),
    "tags": ("eq", "contains", "contains_any"),
    "number": ("eq", "gte", "lte", "gt", "lt"),
    "json": ("eq", "gte", "lte", "gt", "lt", "regex", "sw", "contains"),
}
_JSON_KEY = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")
_COMPARE = {"eq": "=", "gte": ">=", "lte": "<=", "gt": ">", "lt": "<"}


class Scope(NamedTuple):
    """The rows a list may show, as storage writes them: a condition and its bound
    parameters. A service narrows one scope by another (`scope & other`) and hands it to
    the list engine (`fetch(..., *scope)`); it never writes or reads the SQL."""

    sql: str = "1"
    params: tuple[Any, ...] = ()

    def __and__(self, other: Scope) -> Scope:
        return Scope(f"({self.sql}) AND ({other.sql})", (*self.params, *other.params))


EVERYTHING = Scope()
NOTHING = Scope("0")


def org_and_projects(
    table: str, org_id: str, project_scope: str | None, projects: list[str] | None
) -> tuple[str, tuple[Any, ...]]:
    """The scope of a list of what only admins of an org and its projects manage (e-mail
    templates, provisioning claims): the org's rows (`projects` None), or those of the
    listed projects; in a project session only that project's (org-level resources do not
    appear in project-level lists)."""
    clauses, params = [f"{table}.org_id = ?"], [org_id]
    if project_scope:
        clauses.append(f"{table}.project_id = ?")
        params.append(project_scope)
    if projects is not None:
        marks = ", ".join("?" for _ in projects) or "NULL"
        clauses.append(f"{table}.project_id IN ({marks})")
        params.extend(projects)
    return " AND ".join(clauses), tuple(params)


@dataclass(frozen=True)
class Field:
    """One listable field. `folded` names a casefolded copy of a text column, if stored.

    SQLite's lower() folds ASCII only; names are case-insensitive in every script, so a
    field with a folded copy compares and sorts on it (the value is casefolded in Python).
    """

    kind: str
    sql: str
    sortable: bool = True
    folded: str | None = None
    # Never NULL: sorts on the bare expression, so an index in that order serves the page.
    not_null: bool = False


@dataclass(frozen=True)
class Table:
    name: str
    fields: dict[str, Field]
    # Its full-text search: an FTS5 table and the columns a search may name. None: the list
    # has no search, and the engine refuses one (never an empty page as if nothing matched).
    fts: str | None = None
    fts_columns: tuple[str, ...] = ()
    # Which FTS rows a listed row is found by: (the listed row's expression, the FTS
    # table's column it equals). By default the row's own (`rowid`); an access object is
    # found by its target's row in the target's index (`access.target_id`, `id`).
    fts_join: tuple[str, str] | None = None
    json_columns: tuple[str, ...] = ()
    # Pages of records (storage/records.py) rather than dictionaries of every column.
    codec: Codec[Any] | None = None
    # One row per value of this expression (the first stored of those that match), for
    # lists of IDs where two rows may name the same thing (access held directly and
    # through a role).
    one_per: str | None = None
    # What breaks ties between rows of equal sort value and names a row in a continuation
    # key, when `<name>.id` is not unique within a list (a device's job executions, whose
    # `id` is the device's: the job's ID tells them apart).
    key: str | None = None

    def kinds(self) -> dict[str, str]:
        return {name: f.kind for name, f in self.fields.items()}

    def key_sql(self) -> str:
        return self.key or f"{self.name}.id"


def column(
    table: str, kind: str, name: str, sortable: bool = True, not_null: bool = False
) -> Field:
    return Field(kind, f"{table}.{name}", sortable, not_null=not_null)


def common_fields(table: str) -> dict[str, Field]:
    """The fields every listable resource has: its ID, tags, state and audit trail."""
    return {
        "id": column(table, "id", "id", not_null=True),
        "tags": column(table, "tags", "tags", sortable=False),
        "is_active": column(table, "bool", "is_active"),
        "is_delete_protected": column(table, "bool", "is_delete_protected"),
        "created_date": column(table, "datetime", "created_date", not_null=True),
        "created_by": column(table, "id", "created_by"),
        "last_updated_date": column(table, "datetime", "last_updated_date", not_null=True),
        "last_updated_by": column(table, "id", "last_updated_by"),
    }


@dataclass(frozen=True)
class Filter:
    field: str
    op: str
    value: Any


@dataclass(frozen=True)
class ListQuery:
    limit: int = 100
    order_by: str = "created_date"
    desc: bool = False
    filters: tuple[Filter, ...] = ()
    search: str | None = None
    search_fields: tuple[str, ...] = ()
    after: tuple[Any, str] | None = None
    offset: int = 0
    object_count: bool = False
    page_count: bool = False

    @property
    def counts_only(self) -> bool:
        return self.object_count or self.page_count


@dataclass
class Page:
    rows: list[Any]
    more: bool
    last: tuple[Any, str] | None = None
    total: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Where:
    clauses: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)

    def add(self, clause: str, *params: Any) -> None:
        self.clauses.append(clause)
        self.params.extend(params)

    def sql(self) -> str:
        return " AND ".join(self.clauses) if self.clauses else "1"


def expression(table: Table, name: str) -> str:
    """The SQL for a whitelisted field or a `<json column>.<key>` custom attribute."""
    if name in table.fields:
        return table.fields[name].sql
    column, _, key = name.partition(".")
    if column in table.json_columns and _JSON_KEY.match(key):
        return f"json_extract({column}, '$.\"{key}\"')"
    raise KeyError(name)


def sort_expression(table: Table, name: str) -> str:
    """What a field sorts by: its folded copy when it has one, so case does not split runs."""
    spec = table.fields.get(name)
    if spec is not None and spec.folded:
        return spec.folded
    return expression(table, name)


def fetch(
    conn: apsw.Connection,
    table: Table,
    query: ListQuery,
    scope: str = "1",
    scope_params: tuple[Any, ...] = (),
) -> Page:
    where = _build_where(table, query, scope, scope_params)
    if query.counts_only:
        total = count(conn, table, where)
        return Page([], False, None, total)
    order = order_expression(table, query.order_by)
    direction = "DESC" if query.desc else "ASC"
    if query.after is not None:
        where.add(f"({order}, {table.key_sql()}) {'<' if query.desc else '>'} (?, ?)", *query.after)
    columns = table.codec.select if table.codec is not None else f"{table.name}.*"
    sql = (
        f"SELECT {columns}, {order} AS __sort FROM {table.name} WHERE {where.sql()}"
        f" ORDER BY {order} {direction}, {table.key_sql()} {direction} LIMIT ? OFFSET ?"
    )
    cursor = conn.execute(sql, (*where.params, query.limit + 1, query.offset))
    try:
        names = [d[0] for d in cursor.get_description()][:-1]
    except apsw.ExecutionCompleteError:  # no rows: the statement already finished
        names = []
    raw = list(cursor)
    more = len(raw) > query.limit
    raw = raw[: query.limit]
    if table.codec is not None:
        rows: list[Any] = [table.codec.decode(values[:-1]) for values in raw]
        ids = [r.id for r in rows]
    else:
        rows = [dict(zip(names, values[:-1], strict=True)) for values in raw]
        ids = [r["id"] for r in rows]
    last = (raw[-1][-1], ids[-1]) if more and raw else None
    return Page(rows, more, last)


def order_expression(table: Table, name: str) -> str:
    """What a page is ordered by. NULLs sort as '' so a continuation key can name them;
    a field that is never NULL is left bare, so an index in its order serves the page."""
    spec = table.fields.get(name)
    sort = sort_expression(table, name)
    if spec is not None and spec.not_null:
        return sort
    return f"coalesce({sort}, '')"


def count(conn: apsw.Connection, table: Table, where: _Where) -> int:
    return int(scalar(conn, f"SELECT count(*) FROM {table.name} WHERE {where.sql()}", where.params))


def _build_where(
    table: Table, query: ListQuery, scope: str, scope_params: tuple[Any, ...]
) -> _Where:
    where = _Where()
    where.add(f"({scope})", *scope_params)
    for item in query.filters:
        _add_filter(where, table, item)
    if query.search:
        _add_search(where, table, query.search, query.search_fields)
    if table.one_per is not None:
        _add_one_per(where, table, table.one_per)
    return where


def _add_one_per(where: _Where, table: Table, key: str) -> None:
    """Keep the first stored row of each `key` among the rows that match everything else.
    The subquery reads the same table under the same name, so every field expression
    inside it names the subquery's own row; its rows are the caller's few, by index."""
    name = table.name
    where.add(
        f"{name}.rowid IN (SELECT min({name}.rowid) FROM {name} WHERE {where.sql()}"
        f" GROUP BY {key})",
        *where.params,
    )


def _add_filter(where: _Where, table: Table, item: Filter) -> None:
    sql = expression(table, item.field)
    spec = table.fields.get(item.field)
    kind = spec.kind if spec is not None else "json"
    if item.op not in OPS_BY_KIND[kind]:
        raise KeyError(f"{item.field}.{item.op}")
    if kind == "tags":
        _add_tags(where, sql, item)
    elif item.op == "regex":
        where.add(f"regexp(?, {sql})", item.value)
    elif kind == "json":
        _add_json(where, sql, item)
    elif kind == "text" and spec is not None:
        _add_text(where, spec, item)
    elif kind == "datetime" and item.op == "eq" and isinstance(item.value, tuple):
        where.add(f"{sql} BETWEEN ? AND ?", *item.value)
    else:
        where.add(f"{sql} {_COMPARE[item.op]} ?", item.value)


def _add_text(where: _Where, spec: Field, item: Filter) -> None:
    """Case-insensitive eq, sw and contains; on the folded copy when the field has one."""
    if spec.folded:
        column, mark, value = spec.folded, "?", str(item.value).casefold()
    else:
        column, mark, value = f"lower({spec.sql})", "lower(?)", item.value
    if item.op == "sw":
        where.add(f"substr({column}, 1, length({mark})) = {mark}", value, value)
    elif item.op == "contains":
        where.add(f"instr({column}, {mark}) > 0", value)
    else:
        where.add(f"{column} = {mark}", value)


def _add_json(where: _Where, sql: str, item: Filter) -> None:
    """A custom attribute: eq matches any candidate value (the API sends both 30 and '30').

    Comparisons only match values of the same type as the bound, because SQLite orders every
    text above every number: `age >= 30` must not match an age of 'unknown'.
    """
    if item.op == "sw":
        where.add(f"substr(lower({sql}), 1, length(?)) = lower(?)", item.value, item.value)
    elif item.op == "contains":
        where.add(f"instr(lower({sql}), lower(?)) > 0", item.value)
    elif item.op == "eq":
        values = item.value if isinstance(item.value, tuple) else (item.value,)
        where.add(f"{sql} IN ({', '.join('?' for _ in values)})", *values)
    else:
        where.add(f"{_same_type(sql, item.value)} AND {sql} {_COMPARE[item.op]} ?", item.value)


def _same_type(sql: str, value: Any) -> str:
    if isinstance(value, int | float):
        return f"typeof({sql}) IN ('integer', 'real')"
    return f"typeof({sql}) = 'text'"


def _add_tags(where: _Where, sql: str, item: Filter) -> None:
    wanted = list(item.value)
    marks = ", ".join("?" for _ in wanted)
    has = f"(SELECT count(DISTINCT value) FROM json_each({sql}) WHERE value IN ({marks}))"
    if item.op == "contains_any":
        where.add(f"{has} > 0", *wanted)
    elif item.op == "contains":
        where.add(f"{has} = ?", *wanted, len(set(wanted)))
    else:
        where.add(
            f"{has} = ? AND json_array_length({sql}) = ?",
            *wanted,
            len(set(wanted)),
            len(set(wanted)),
        )


def _add_search(where: _Where, table: Table, text: str, fields: tuple[str, ...]) -> None:
    """Every word a prefix of a word of the searched columns (FTS5, case-insensitive), all
    in one MATCH (storage/search.py). A table without an index raises: an empty page would
    tell the caller nothing matched."""
    if table.fts is None:
        raise LookupError(f"{table.name}: this list has no full-text search")
    unknown = [name for name in fields if name not in table.fts_columns]
    if unknown:
        raise KeyError(unknown[0])
    found = search.words(text)
    if not found:  # no word to look for: nothing is found
        where.add("0")
        return
    match = search.match(found, fields)
    row, key = table.fts_join or (f"{table.name}.rowid", "rowid")
    where.add(f"{row} IN (SELECT {key} FROM {table.fts} WHERE {table.fts} MATCH ?)", match)
