"""The list engine's rules: limits, continuation keys, and what a resource may be listed by.

Continuation keys are signed with the installation's HMAC key, so a client can hand one
back but cannot forge or edit it to read past its filters.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Container, Iterable
from contextvars import ContextVar
from typing import Any

from edge.kernel import json_text, search
from edge.kernel.errors import TooManyAttempts, ValidationError
from edge.kernel.origin import origin
from storage import listing, patterns
from storage.database import SEARCHES_PER_CALLER, Database, SearchesQueued
from storage.listing import OPS_BY_KIND, Filter, ListQuery, Page, Table, expression
from storage.patterns import PatternBudget, PatternTooSlow
from storage.search import SearchTooBroad

__all__ = [
    "Filter",
    "ListQuery",
    "Page",
    "Table",
    "OPS_BY_KIND",
    "CursorCodec",
    "MIN_LIMIT",
    "MAX_LIMIT",
    "DEFAULT_LIMIT",
    "check_query",
    "split_operator",
]

MIN_LIMIT, MAX_LIMIT, DEFAULT_LIMIT = 1, 1000, 100
KEY_FIELD = "last_evaluated_key"
# The operators a filter parameter may end with, longest first where one ends another.
OP_SUFFIXES = ("contains_any", "contains", "regex", "gte", "lte", "gt", "lt", "sw")


class CursorCodec:
    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def encode(self, resource: str, query: ListQuery, last: tuple[Any, str]) -> dict[str, Any]:
        """The key of the row read last. Where the sort value is the row's ID (a walk in
        path order) it is not written twice: a 1,024-character path, escaped in JSON and
        then in a URL, must still fit in a request line."""
        value, row_id = last
        key = {"id": row_id, "v": value, "sig": self._sign(resource, query, value, row_id)}
        if value == row_id:
            del key["v"]
        return key

    def decode(self, resource: str, query: ListQuery, text: str) -> tuple[Any, str]:
        try:  # the one JSON reader: depth, NaN and surrogates are refused here too
            key = json_text.loads(text, field=KEY_FIELD)
        except ValidationError:
            raise ValidationError(KEY_FIELD, "must be valid JSON") from None
        if not self._well_formed(key):
            raise ValidationError(KEY_FIELD, "is not a continuation key of this list")
        key.setdefault("v", key["id"])
        expected = self._sign(resource, query, key["v"], key["id"])
        # As bytes: compare_digest refuses non-ASCII str, and a forged sig may hold any text.
        if not hmac.compare_digest(expected.encode(), key["sig"].encode()):
            raise ValidationError(KEY_FIELD, "is not a continuation key of this list")
        return key["v"], key["id"]

    @staticmethod
    def _well_formed(key: Any) -> bool:
        return (
            isinstance(key, dict)
            and set(key) in ({"id", "v", "sig"}, {"id", "sig"})
            and isinstance(key["id"], str)
            and isinstance(key["sig"], str)
            and (key.get("v") is None or isinstance(key["v"], str | int | float))
        )

    def _sign(self, resource: str, query: ListQuery, value: Any, row_id: str) -> str:
        message = json.dumps([resource, query.order_by, query.desc, value, row_id])
        digest = hmac.new(self._secret, message.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:18]).decode()


def split_operator(
    key: str, names: Container[str], suffixes: Iterable[str] = OP_SUFFIXES
) -> tuple[str | None, str]:
    """The field and operator a filter parameter names: `name` (eq), `name_op` or `name.op`
    (the SDK sends the dotted form). (None, "eq") when it names no field of `names`; a list
    that takes fewer operators passes its own `suffixes`, so another stays unknown."""
    key = key.replace(".", "_")
    if key in names:
        return key, "eq"
    for suffix in suffixes:
        base = key[: -len(suffix) - 1]
        if key.endswith("_" + suffix) and base in names:
            return base, suffix
    return None, "eq"


_BUDGET: ContextVar[PatternBudget | None] = ContextVar("pattern_budget", default=None)


def _pattern_budget() -> PatternBudget:
    """The pattern-matching budget of the running request: one for all of its list
    queries. Each request is an asyncio task with its own context, so a budget set here
    lives exactly as long as the request."""
    budget = _BUDGET.get()
    if budget is None:
        budget = PatternBudget()
        _BUDGET.set(budget)
    return budget


def check_query(table: Table, query: ListQuery) -> None:
    """Reject a sort, filter or search field the resource does not offer, naming it, and
    a search of a list that has none (a 400, never an empty page as if nothing matched).

    Whatever passes here is known to the storage engine, so a bad name is a 400, never
    a KeyError deep in the query builder.
    """
    if not _can_sort(table, query.order_by):
        raise ValidationError("order_by", f"cannot sort by '{query.order_by}'")
    for item in query.filters:
        if item.op not in OPS_BY_KIND[_kind(table, item.field)]:
            raise ValidationError(item.field, f"'{item.op}' does not apply to {item.field}")
    if (query.search or query.search_fields) and table.fts is None:
        raise ValidationError("search", "is not offered: this list has no full-text search")
    for name in query.search_fields:
        if name not in table.fts_columns:
            choices = ", ".join(table.fts_columns) or "nothing"
            raise ValidationError(
                "search_fields", f"'{name}' is not searchable (choose from {choices})"
            )


def _kind(table: Table, name: str) -> str:
    """The kind of a declared field, or 'json' for a well-formed custom attribute."""
    if name in table.fields:
        return table.fields[name].kind
    try:
        expression(table, name)
    except KeyError:
        raise ValidationError(name, "is not a field of this list") from None
    return "json"


def _can_sort(table: Table, name: str) -> bool:
    if name in table.fields:
        return table.fields[name].sortable and table.fields[name].kind != "tags"
    try:
        return _kind(table, name) == "json"
    except ValidationError:
        return False


def _caller() -> str | None:
    """Whose searches a search counts among: the running request's account, else its
    client address (None outside a request: not counted)."""
    found = origin()
    return found.principal.account_id if found.principal is not None else found.client


async def fetch(
    db: Database,
    table: Table,
    query: ListQuery,
    scope: str = "1",
    scope_params: tuple[Any, ...] = (),
    *,
    searching: bool = False,
) -> Page:
    """Check the query against the table, then run it on a reader thread: a search (or a
    scope that holds one: `searching`) as one, within its step budget (storage/search.py)
    and its caller's share of the search worker (a 429 past it)."""
    check_query(table, query)
    run = patterns.within(
        _pattern_budget(), lambda c: listing.fetch(c, table, query, scope, scope_params)
    )
    try:
        if searching or query.search:
            return await db.search(run, _caller())
        return await db.scan(run)
    except SearchesQueued:
        raise TooManyAttempts(
            f"You have {SEARCHES_PER_CALLER} searches running or waiting; retry when one ends",
            retry_after=1,
        ) from None
    except PatternTooSlow:
        raise ValidationError(
            None, "A regular expression filter took too long; simplify it"
        ) from None
    except SearchTooBroad:
        raise ValidationError("search", search.TOO_BROAD) from None
