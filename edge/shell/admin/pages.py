"""`list`: a resource's list, read through its service page by page, as the HTTP list is.

The operator gives `--limit` (default 100, as the HTTP list's; any number: pages of up to
1,000 are read in turn), `--search` (the full-text search of `?search=`),
`--active`/`--suspended` (`?is_active=`), and `--after KEY` to continue. The result is the
HTTP list body: the rows under the resource's name and, when more remain,
`last_evaluated_key`, which `--after` and the HTTP list's `last_evaluated_key` both take.

The list engine is imported where it is used: building the parser of every `edge`
command must stay light.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from edge.kernel.errors import Conflict, NotFound, ValidationError
from edge.shell.admin import output

if TYPE_CHECKING:
    from edge.kernel.listing import CursorCodec, ListQuery, Page

Fetch = Callable[["ListQuery"], Awaitable["Page"]]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, help="at most this many (default: 100)")
    parser.add_argument("--search", help="full-text search, as the HTTP list's ?search=")
    state = parser.add_mutually_exclusive_group()
    for flag, value in (("--active", True), ("--suspended", False)):
        state.add_argument(
            flag, dest="is_active", action="store_const", const=value, help=f"only {flag[2:]} ones"
        )
    parser.add_argument(
        "--after",
        metavar="KEY",
        help="continue after this last_evaluated_key (from --json, or from the HTTP list)",
    )


@dataclass(frozen=True)
class Listing:
    """One resource's list: its name in the body and in continuation keys."""

    resource: str
    codec: CursorCodec

    async def body(
        self, fetch: Fetch, args: argparse.Namespace, project: str | None = None
    ) -> dict[str, Any]:
        """Up to --limit rows, page after page, as the HTTP list body. `project`: a filter
        on the rows' project_id (groups; users and devices take theirs as membership)."""
        from edge.kernel.listing import MAX_LIMIT

        query, limit = self._query(args, project), _limit(args)
        rows: list[Any] = []
        while True:
            page = await fetch(replace(query, limit=min(MAX_LIMIT, limit - len(rows))))
            rows += page.rows
            if not page.more or page.last is None:
                return {self.resource: rows}
            query = replace(query, after=page.last)
            if len(rows) >= limit:
                key = self.codec.encode(self.resource, query, page.last)
                return {self.resource: rows, "last_evaluated_key": key}

    def _query(self, args: argparse.Namespace, project: str | None) -> ListQuery:
        from edge.kernel.listing import Filter, ListQuery

        filters = []
        if args.is_active is not None:
            filters.append(Filter("is_active", "eq", args.is_active))
        if project:
            filters.append(Filter("project_id", "eq", project))
        search = (args.search or "").strip() or None
        base = ListQuery(filters=tuple(filters), search=search)
        if args.after:
            return replace(base, after=self.codec.decode(self.resource, base, args.after))
        return base


def _limit(args: argparse.Namespace) -> int:
    from edge.kernel.listing import DEFAULT_LIMIT

    limit: int = DEFAULT_LIMIT if args.limit is None else args.limit
    if limit < 1:
        raise ValidationError("limit", "must be a whole number of at least 1")
    return limit


def show(args: argparse.Namespace, body: dict[str, Any], columns: output.Columns) -> None:
    """The body as one JSON document, or a table and how to see the rest."""
    if args.json:
        output.document(body)
        return
    rows = next(iter(body.values()))
    output.table(rows, columns)
    key = body.get("last_evaluated_key")
    if key is not None:
        print(f"(more remain: add --after '{json.dumps(key, separators=(',', ':'))}')")


async def by_id_or_name(
    get: Callable[[str], dict[str, Any]], fetch: Fetch, noun: str, where: str, given: str
) -> str:
    """The ID of the one `noun` with this ID, else with this name (compared without
    regard to case), through the service's own get and list."""
    from edge.kernel.listing import Filter, ListQuery

    try:
        return str(get(given.strip())["id"])
    except NotFound:
        pass
    named = await fetch(ListQuery(limit=2, filters=(Filter("name", "eq", given.strip()),)))
    if not named.rows:
        raise NotFound(f"no {noun} of {where} has the ID or name {given!r}")
    if len(named.rows) > 1:
        raise Conflict(f"several {noun}s of {where} are named {given!r}: give the ID")
    return str(named.rows[0]["id"])
