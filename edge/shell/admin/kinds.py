"""What users, groups and devices share on the command line: `list`, `show`, `suspend` and
`resume`, each through the kind's own service with the calls its HTTP handlers make
(`list`, `get`, and `patch` with `is_active`). A kind supplies only what differs: its
service, its table's columns, how the operator names one, and what a suspension means.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from edge.kernel.config import Config
from edge.shell.admin import output, pages
from edge.shell.admin.operator import Operator, run
from edge.shell.admin.verbs import Flags, verb

if TYPE_CHECKING:
    from edge.services import Services

Row = dict[str, Any]
Find = Callable[[Operator, str], Awaitable[str]]
Members = Callable[[str | None, str | None], Any]  # (group, project) -> the service's filters


@dataclass(frozen=True)
class Kind:
    noun: str  # "user"
    columns: output.Columns
    service: Callable[[Services], Any]  # its service: .list, .get, .patch, .cursors
    find: Find  # what the operator typed (an ID, a login, a name) -> the ID
    named_by: str  # "ID or login"
    suspended: str  # what suspension does, as `suspend` reports it
    members: Members | None = None  # users and devices: --group and --project

    @property
    def plural(self) -> str:
        return f"{self.noun}s"

    def add_verbs(self, verbs: Any, flags: Flags, example: str) -> None:
        """list, show, suspend and resume; `example`: how one is named (`jdoe`)."""
        where = "--org clinic"
        listing = verb(
            verbs,
            "list",
            f"list {self.plural}, as GET /v2/{self.plural} does",
            f"edge admin {self.plural} list {where} --search {example} --limit 20",
            partial(_list, self),
            flags,
        )
        pages.add_arguments(listing)
        listing.add_argument("--project", help=f"{self.plural} of this project (its ID)")
        if self.members is not None:
            listing.add_argument("--group", help="members of this group (its ID)")
        for name, text in (
            ("show", f"show a {self.noun} as GET /v2/{self.plural}/{{id}} does"),
            ("suspend", f"suspend a {self.noun}: {self.suspended}"),
            ("resume", f"reactivate a suspended {self.noun}"),
        ):
            handler = partial(_show if name == "show" else _set_active, self)
            one = verb(
                verbs,
                name,
                text,
                f"edge admin {self.plural} {name} {example} {where}",
                handler,
                flags,
            )
            one.add_argument(self.noun, help=f"the {self.noun}'s {self.named_by}")

    def fetch(self, operator: Operator, args: argparse.Namespace) -> pages.Fetch:
        service = self.service(operator.services)
        extra = () if self.members is None else (self.members(args.group, args.project),)
        return lambda query: service.list(operator.principal, query, *extra)

    async def get(self, operator: Operator, given: str) -> Row:
        found = await self.find(operator, given)
        return dict(self.service(operator.services).get(operator.principal, found))


def _list(kind: Kind, args: argparse.Namespace, config: Config) -> int:
    async def body(operator: Operator) -> Row:
        listing = pages.Listing(kind.plural, kind.service(operator.services).cursors)
        project = None if kind.members else args.project
        return await listing.body(kind.fetch(operator, args), args, project)

    pages.show(args, run(config, args, body), kind.columns)
    return 0


def _show(kind: Kind, args: argparse.Namespace, config: Config) -> int:
    row = run(config, args, lambda operator: kind.get(operator, getattr(args, kind.noun)))
    if args.json:
        output.document({kind.noun: row})
    else:
        output.record(row)
    return 0


def _set_active(kind: Kind, args: argparse.Namespace, config: Config) -> int:
    active = args.verb == "resume"

    async def change(operator: Operator) -> Row:
        service = kind.service(operator.services)
        found = await kind.find(operator, getattr(args, kind.noun))
        await service.patch(operator.principal, found, {"is_active": active})
        return dict(service.get(operator.principal, found))

    row = run(config, args, change)
    if args.json:
        output.document({kind.noun: row})
        return 0
    said = "active again" if active else f"suspended: {kind.suspended}"
    name = row.get("name") or row.get("username")
    print(f"{kind.noun} {row['id']} ({output.cell(name)}) is {said}")
    return 0
