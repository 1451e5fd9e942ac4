"""`edge admin orgs list|create|show`, and the older name `edge admin create-org` (the
same handler), through edge/tenancy/orgs.py as the HTTP interface's handlers call it, as
the operator (with staff's powers, as only staff manage organizations):
- list: GET /v2/orgs; show: GET /v2/orgs/{id} (by ID or alias);
- create: POST /v2/orgs, and with `--admin-email` its first admin, whose password is asked
  for or read from standard input (never taken from the command line).
Organizations are not suspended or reset here: PATCH /v2/orgs is the way, as staff.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from edge.kernel.config import Config
from edge.shell.admin import output, pages
from edge.shell.admin.operator import Operator, run
from edge.shell.admin.verbs import Flags, kind, verb

COLUMNS = (
    ("id", "ID"),
    ("alias", "ALIAS"),
    ("name", "NAME"),
    ("is_active", "ACTIVE"),
    ("created_date", "CREATED"),
)
ADMIN_EMAIL = "the first admin's e-mail; their password is asked for, or read from standard input"


def add(sub: Any, flags: Flags) -> None:
    verbs = kind(sub, "orgs", "the organizations of the site")
    listing = verb(
        verbs,
        "list",
        "list organizations, as GET /v2/orgs does",
        "edge admin orgs list --search clinic",
        _list,
        flags,
        org="none",
    )
    pages.add_arguments(listing)
    create = verb(
        verbs,
        "create",
        "create an organization (and its first admin), as POST /v2/orgs does",
        "edge admin orgs create 'Clinic One' --alias clinic1 --admin-email boss@clinic.example",
        _create,
        flags,
        org="none",
    )
    create.add_argument("name", help="the organization's name")
    create.add_argument("--alias", help="its alias (unique on the site): the client_id to sign in")
    create.add_argument("--admin-email", dest="org_admin_email", help=ADMIN_EMAIL)
    show = verb(
        verbs,
        "show",
        "show an organization as GET /v2/orgs/{id} does",
        "edge admin orgs show clinic1",
        _show,
        flags,
        org="none",
    )
    show.add_argument("org_name", metavar="org", help="its ID or alias")


def add_old_name(sub: Any, flags: Flags) -> None:
    """`edge admin create-org`, as before `orgs` existed (the admin is required here)."""
    create = verb(
        sub,
        "create-org",
        "create an organization and its first admin (the same as `orgs create`)",
        "edge admin create-org --name 'Clinic One' --alias clinic1"
        " --admin-email boss@clinic.example",
        _create,
        flags,
        org="none",
        json=False,
    )
    create.add_argument("--name", required=True)
    create.add_argument("--alias")
    create.add_argument("--admin-email", dest="org_admin_email", required=True, help=ADMIN_EMAIL)


def _list(args: argparse.Namespace, config: Config) -> int:
    async def body(operator: Operator) -> dict[str, Any]:
        orgs = operator.services.orgs
        listing = pages.Listing("orgs", orgs.cursors)
        fetch = lambda query: orgs.list(operator.principal, query)  # noqa: E731
        return await listing.body(fetch, args)

    pages.show(args, run(config, args, body), COLUMNS)
    return 0


def _create(args: argparse.Namespace, config: Config) -> int:
    from edge.shell import accounts

    body: dict[str, Any] = {"name": args.name}
    if args.alias:
        body["alias"] = args.alias
    admin = None
    if args.org_admin_email:
        password = accounts.read_password(sys.stdin)  # never from the command line (ps shows it)
        admin = {"email": args.org_admin_email, "password": password}

    async def create(operator: Operator) -> str:
        return await operator.services.orgs.create(operator.principal, body, admin)

    org_id = run(config, args, create)
    if getattr(args, "json", False):
        output.document({"org": {"id": org_id}})
        return 0
    if admin is None:
        print(f"created organization {org_id}")
        return 0
    print(f"created organization {org_id} with admin {args.org_admin_email}")
    _how_the_admin_signs_in(config, args.org_admin_email, args.alias or org_id)
    return 0


def _how_the_admin_signs_in(config: Config, email: str, client_id: str) -> None:
    """An org admin signs in like any user of the org: the org's alias (or ID) as client_id."""
    print(f"The admin signs in with POST {config.base_url}/v2/auth/token, form fields:")
    print(f"  grant_type=password  username={email}  password=<theirs>  client_id={client_id}")


def _show(args: argparse.Namespace, config: Config) -> int:
    async def show(operator: Operator) -> dict[str, Any]:
        orgs = operator.services.orgs
        found = orgs.resolve_client(args.org_name, field="org")
        return orgs.get(operator.principal, found.id)

    org = run(config, args, show)
    if args.json:
        output.document({"org": org})
    else:
        output.record(org)
    return 0
