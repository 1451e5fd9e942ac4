"""Reading data: one entry (a point query, inline), or a page of a subtree (a walk on a
reader thread), or a count (docs/data.md, "Reading").

A list is filtered inside its walk: the subtree, the index filters and the caller's path
grants are checked on every row read in SQL; `path_filter` and `search` in Python, under
one time budget (edge/data/matchers.py). Every request reads at most
MAX_PATH_FILTER_SCAN_ITEMS rows and answers at most PAGE_BYTES of values, whatever its
filters and however many jobs it has: one `ReadBudget` (edge/data/pages.py) for all.
"""

from __future__ import annotations

import math
from typing import Any

from edge.data import pages, plans
from edge.data.matchers import Matcher
from edge.data.pages import START, Collected, DataKeys, ReadBudget, collect
from edge.data.query import SEARCHABLE, DataQuery
from edge.data.signing import DataSigner
from edge.data.target import DataTarget
from edge.data.views import present, present_stored
from storage import data as store
from storage import data_walks as walks
from storage.data_walks import Walk, Walked
from storage.database import Database
from storage.rows import Tx

Body = dict[str, Any]


def _everything(row: Walked) -> bool:
    return True


class BudgetSpent(Exception):
    """The request's values budget is spent: the entry at this path was not read."""


class Reads:
    def __init__(self, db: Database, keys: DataKeys, signer: DataSigner) -> None:
        self._db = db
        self._keys = keys
        self._signer = signer

    def one(
        self, target: DataTarget, path: str, query: DataQuery, budget: ReadBudget | None = None
    ) -> Body | None:
        """The entry at a path (None when there is none): a point query on this thread.
        With a request's `budget`, its value is charged to it, or BudgetSpent."""
        target.require(path, ("read",))
        charged = None if query.paths_only else budget

        def read(conn: Tx) -> tuple[Any, ...] | None:
            if charged is not None:
                _reserve(conn, target.group_id, path, charged)
            return store.get_stored(conn, target.group_id, path)

        row = self._db.read(read)  # its size and its value in one snapshot
        if row is None:
            return None
        if query.paths_only:
            return {"paths": [path]}
        if not query.verify:
            return {"data": present_stored(row)}
        entry = store.decode(row)
        return {"data": present(entry, self._signer.verify(entry))}

    async def many(
        self, target: DataTarget, path: str, query: DataQuery, budget: ReadBudget | None = None
    ) -> Body:
        """A page of the subtree at `path` (the path itself included), or its count, within
        the request's `budget` (a fresh one when the request has this one page)."""
        budget = budget or ReadBudget()
        rules, default = target.grants.rules(path, "read")
        if not default and not any(allowed for _, allowed in rules):
            target.refuse(f"Not permitted to read data at {path}")
        fields = query.search_fields or SEARCHABLE
        matcher = Matcher(query.path_filter, query.search, fields, budget.patterns)
        texts = matcher.fields if query.search is not None else ()
        plan = plans.build(target.group_id, path, query, rules, default, texts)
        if query.key:
            plan = self._after(plan, self._keys.decode(target.group_id, path, plan, query.key))
        if query.counts_only:
            return await self._count(target, path, plan, matcher, query, budget)
        entries: dict[str, store.DataEntry] = {}
        if budget.spent(values=not query.paths_only):
            got = Collected(resume=plan.after or START)
        else:
            got, entries = await self._db.scan(
                lambda c: self._page(c, plan, matcher, query, budget)
            )
        body: Body
        if query.paths_only:
            body = {"paths": [row.path for row in got.rows]}
        else:
            found = (entries[row.path] for row in got.rows if row.path in entries)
            body = {"data": [present(e, query.verify and self._signer.verify(e)) for e in found]}
        return self._resume(body, target, path, plan, got)

    @staticmethod
    def _after(plan: Walk, key: pages.Key) -> Walk:
        """The walk after a continuation key; from the beginning after START."""
        return plan if key == START else plans.after(plan, key)

    def _page(
        self, conn: Tx, plan: Walk, matcher: Matcher, query: DataQuery, budget: ReadBudget
    ) -> tuple[Collected, dict[str, store.DataEntry]]:
        accept = matcher if matcher.active else _everything
        got = collect(walks.walk(conn, plan), query.limit, budget.rows_left, accept)
        if query.paths_only:
            budget.charge(got.read)
            return got, {}
        paths = [row.path for row in got.rows]
        first = not budget.answered
        entries, used = store.get_page(
            conn, plan.group_id, paths, budget.bytes_left, first_free=first
        )
        budget.charge(got.read, used, len(entries))
        return pages.cut(got, len(entries), plan.after), entries

    async def _count(
        self,
        target: DataTarget,
        path: str,
        plan: Walk,
        matcher: Matcher,
        query: DataQuery,
        budget: ReadBudget,
    ) -> Body:
        """Without filters a count is one SQL count over the walked range; with them it
        reads rows like a page (the request's scan cap) and may answer a continuation key."""
        got = Collected()
        if not plan.filtered and not matcher.active:
            got.count = await self._db.scan(lambda c: walks.count(c, plan))
        elif budget.spent(values=False):
            got.resume = plan.after or START
        else:
            cap = budget.rows_left
            accept = matcher if matcher.active else _everything
            got = await self._db.scan(lambda c: collect(walks.walk(c, plan), None, cap, accept))
            budget.charge(got.read)
        body: Body = {}
        if query.object_count:
            body["object_count"] = got.count
        if query.page_count:
            body["page_count"] = math.ceil(got.count / query.limit)
        return self._resume(body, target, path, plan, got)

    def _resume(
        self, body: Body, target: DataTarget, path: str, plan: Walk, got: Collected
    ) -> Body:
        if got.resume is not None:
            body["last_evaluated_key"] = self._keys.encode(target.group_id, path, plan, got.resume)
        return body


def _reserve(conn: Tx, group_id: str, path: str, budget: ReadBudget) -> None:
    """Charge the value at `path` to `budget` before it is read (its size first)."""
    size = store.value_sizes(conn, group_id, [path]).get(path)
    if size is None:
        return
    if budget.answered and size > budget.bytes_left:
        raise BudgetSpent(path)
    budget.charge(0, size, 1)
