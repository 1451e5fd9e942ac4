"""`edge admin users list|create|show|suspend|resume|reset|unlock`, and the older names
`edge admin reset-password` and `edge admin unlock` (the same handlers).

Each verb calls what the HTTP interface calls (edge/accounts/users.py), as the operator:
- list: GET /v2/users; create: POST /v2/users (audited `user_created`);
- show: GET /v2/users/{id};
- suspend / resume: PATCH /v2/users/{id} with is_active false / true (audited
  `user_updated`; suspending ends the user's sessions);
- reset: a new password, temporary (the user chooses their own at the next sign-in), every
  session ended and every sign-in block lifted (`password_set_by_operator`); without
  `--org` it resets a staff account. The interface has no such call: this is the
  operator's way back in, as `reset-password` always was;
- unlock: lift every sign-in block (`sign_in_blocks_cleared`).
A user is named by its ID or any login (username, e-mail, phone number). Passwords are
asked for at a prompt or read from standard input, never taken from the command line.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from edge.kernel.config import Config
from edge.kernel.errors import NotFound
from edge.shell.admin import output
from edge.shell.admin.kinds import Kind
from edge.shell.admin.operator import Operator, run
from edge.shell.admin.verbs import Flags, kind, verb

if TYPE_CHECKING:  # imported where used: building the parser must stay light
    from edge.shell.accounts import Account

COLUMNS = (
    ("id", "ID"),
    ("username", "USERNAME"),
    ("email", "E-MAIL"),
    ("is_active", "ACTIVE"),
    ("project_id", "PROJECT"),
    ("last_seen", "LAST SEEN"),
)
PROFILE = ("username", "first_name", "last_name", "phone_number")


def user_id(operator: Operator, given: str) -> str:
    """The user a login names, else the user with this ID, in the operator's org."""
    from edge.shell import accounts

    try:
        return accounts.find(operator.services, given, operator.where).id
    except NotFound:
        pass
    try:
        return str(operator.services.users.get(operator.principal, given.strip())["id"])
    except NotFound:
        raise NotFound(f"no user of {operator.where} has the ID or login {given!r}") from None


async def _find(operator: Operator, given: str) -> str:
    return user_id(operator, given)


def _members(group: str | None, project: str | None) -> Any:
    from edge.accounts.lists import Filters

    return Filters(group_id=group, project_id=project)


USERS = Kind(
    "user",
    COLUMNS,
    lambda services: services.users,
    _find,
    "ID, username, e-mail or phone number",
    "sign-in is refused and every session has ended",
    _members,
)


def add(sub: Any, flags: Flags) -> None:
    verbs = kind(sub, "users", "the users of an organization")
    USERS.add_verbs(verbs, flags, "jdoe")
    _create_parser(verbs, flags)
    for name, text, example, handler in (
        (
            "reset",
            "set a new, temporary password (asked for, or read from standard input);"
            " sessions end and sign-in blocks are lifted; without --org: a staff account",
            "edge admin users reset jdoe --org clinic\n"
            '  echo "$NEW_PASSWORD" | edge admin users reset admin --data-dir /var/lib/edge',
            _reset,
        ),
        (
            "unlock",
            "lift every sign-in block of a user (or, without --org, of a staff account)",
            "edge admin users unlock jdoe --org clinic",
            _unlock,
        ),
    ):
        one = verb(verbs, name, text, example, handler, flags, org="optional")
        one.add_argument("user", help="the user's ID or login (of staff, unless --org)")


def add_old_names(sub: Any, flags: Flags) -> None:
    """`edge admin reset-password` and `edge admin unlock`, as before `users` existed."""
    for name, text, handler in (
        ("reset-password", "the same as `users reset`", _reset),
        ("unlock", "the same as `users unlock`", _unlock),
    ):
        example = f"edge admin {name} jdoe --org clinic"
        command = verb(sub, name, text, example, handler, flags, org="optional", json=False)
        command.add_argument(
            "user", metavar="login", help="username or e-mail (of staff, unless --org)"
        )


# -- create -------------------------------------------------------------------------------
def _create_parser(verbs: Any, flags: Flags) -> None:
    create = verb(
        verbs,
        "create",
        "create a user, as POST /v2/users does; the password is asked for, or read from"
        " standard input",
        "edge admin users create jdoe@clinic.example --username jdoe --org clinic\n"
        "  edge admin users create new@clinic.example --org clinic --invite",
        _create,
        flags,
    )
    create.add_argument("email", help="the user's e-mail address")
    for name in PROFILE:
        create.add_argument(f"--{name.replace('_', '-')}", dest=name)
    create.add_argument("--project", help="the user's home project (its ID)")
    create.add_argument("--admin", action="store_true", help="make the user an org admin")
    how = create.add_mutually_exclusive_group()
    how.add_argument(
        "--temporary",
        action="store_true",
        help="the password is temporary: the user chooses their own at the first sign-in",
    )
    how.add_argument(
        "--invite",
        action="store_true",
        help="ask for no password: a temporary one is generated and mailed in the invitation",
    )


def _create(args: argparse.Namespace, config: Config) -> int:
    from edge.shell import accounts

    body = _create_body(args)
    if not args.invite:  # never from the command line: ps and the shell history show it
        password = accounts.read_password(sys.stdin)
        body["temp_password" if args.temporary else "password"] = password

    async def create(operator: Operator) -> str:
        return await operator.services.users.create(operator.principal, body)

    made = run(config, args, create)
    if args.json:
        output.document({"user": {"id": made}})
        return 0
    print(f"created user {made} ({output.cell(args.email)}) in {args.org}")
    if args.invite:
        print("  an invitation with a temporary password was sent to that address")
    return 0


def _create_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"email": args.email}
    body.update({n: getattr(args, n) for n in PROFILE if getattr(args, n) is not None})
    if args.project:
        body["project_id"] = args.project
    if args.admin:
        body["org_permissions"] = {"is_admin": True}
    return body


# -- reset and unlock ---------------------------------------------------------------------
def _account(operator: Operator, given: str, org: str | None) -> Account:
    from edge.shell import accounts

    if org is None:
        return accounts.find(operator.services, given, None)
    user = operator.services.users.get(operator.principal, user_id(operator, given))
    return accounts.Account("user", user["id"], user["username"], user.get("email"))


def _reset(args: argparse.Namespace, config: Config) -> int:
    from edge.shell import accounts

    password = accounts.read_password(sys.stdin)

    async def reset(operator: Operator) -> Account:
        account = _account(operator, args.user, args.org)
        await accounts.reset_password(operator.services, account, password)
        return account

    account = run(config, args, reset)
    if getattr(args, "json", False):
        output.document({account.kind: {"id": account.id, "username": account.username}})
        return 0
    then = "they choose their own at the next sign-in" if account.kind == "user" else "done"
    print(f"new password set for {account.kind} {account.username}; sessions ended; {then}")
    return 0


def _unlock(args: argparse.Namespace, config: Config) -> int:
    from edge.shell import accounts

    async def unlock(operator: Operator) -> tuple[Account, int]:
        account = _account(operator, args.user, args.org)
        return account, await accounts.unlock(operator.services, account)

    account, cleared = run(config, args, unlock)
    if getattr(args, "json", False):
        shown = {"id": account.id, "username": account.username, "blocks_lifted": cleared}
        output.document({account.kind: shown})
        return 0
    print(f"lifted {cleared} sign-in block(s) of {account.kind} {account.username}")
    return 0
