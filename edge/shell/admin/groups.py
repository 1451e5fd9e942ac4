"""`edge admin groups list|create|show|suspend|resume`, through edge/tenancy/groups.py as
the HTTP interface's handlers call it, as the operator:
- list: GET /v2/groups; create: POST /v2/groups (no access object for its creator: the
  operator has no account to hold one, as staff have none);
- show: GET /v2/groups/{id};
- suspend / resume: PATCH /v2/groups/{id} with is_active false / true. A suspended group
  gives nothing: its access objects no longer count for its members (docs/permissions.md).
Groups have no `reset`: they hold no credentials. A group is named by its ID or, when only
one group of the organization has it, its name.
"""

from __future__ import annotations

import argparse
from typing import Any

from edge.kernel.config import Config
from edge.shell.admin import output, pages
from edge.shell.admin.kinds import Kind
from edge.shell.admin.operator import Operator, run
from edge.shell.admin.verbs import Flags, kind, verb

COLUMNS = (
    ("id", "ID"),
    ("name", "NAME"),
    ("is_active", "ACTIVE"),
    ("project_id", "PROJECT"),
    ("description", "DESCRIPTION"),
)


async def find(operator: Operator, given: str) -> str:
    groups = operator.services.groups
    return await pages.by_id_or_name(
        lambda group_id: groups.get(operator.principal, group_id),
        lambda query: groups.list(operator.principal, query),
        "group",
        operator.where,
        given,
    )


GROUPS = Kind(
    "group",
    COLUMNS,
    lambda services: services.groups,
    find,
    "ID, or its name if no other group has it",
    "its access objects no longer count for its members",
)


def add(sub: Any, flags: Flags) -> None:
    verbs = kind(sub, "groups", "the groups of an organization")
    GROUPS.add_verbs(verbs, flags, "ward")
    create = verb(
        verbs,
        "create",
        "create a group, as POST /v2/groups does",
        'edge admin groups create Ward --org clinic --description "the ward\'s nurses"',
        _create,
        flags,
    )
    create.add_argument("name", help="the group's name (need not be unique)")
    create.add_argument("--description")
    create.add_argument("--project", help="the group's project (its ID)")


def _create(args: argparse.Namespace, config: Config) -> int:
    body: dict[str, Any] = {"name": args.name}
    if args.description is not None:
        body["description"] = args.description
    if args.project:
        body["project_id"] = args.project

    async def create(operator: Operator) -> str:
        return await operator.services.groups.create(operator.principal, body)

    group_id = run(config, args, create)
    if args.json:
        output.document({"group": {"id": group_id}})
    else:
        print(f"created group {group_id} ({output.cell(args.name)}) in {args.org}")
    return 0
