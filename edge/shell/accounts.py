"""`edge admin reset-password` and `edge admin unlock`: the operator's way back into an
account (a lost staff password, a user locked out by a guess from many addresses).

Both run on the data folder, beside a running server or not: every write goes through the
database, and the server's caches follow the database (sessions revoked, blocks lifted).
A new password is read from a prompt (asked twice, not echoed) or, when standard input is
not a terminal, from its first line; never from the command line, where `ps` and the
shell's history would show it to others.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, TextIO

from edge.auth import hashing
from edge.kernel import audit, clock
from edge.kernel.errors import NotFound, ValidationError
from edge.services import Services
from storage import credentials, staff, users

Kind = Literal["staff", "user"]


@dataclass(frozen=True)
class Account:
    kind: Kind
    id: str
    username: str
    email: str | None

    @property
    def throttle_key(self) -> str:
        return f"{self.kind}:{self.id}"


def find(services: Services, login: str, org: str | None) -> Account:
    """A staff account by username or e-mail, or (with `org`, an org or project ID or
    alias) a user of that org by any of its login fields."""
    text = login.strip().casefold()
    row: Any
    if org is None:
        row = services.db.read(lambda c: staff.find_by_login(c, text))
        kind: Kind = "staff"
    else:
        found_org, project = services.projects.resolve_client(org, field="org")
        row = services.projects.find_login(found_org, project, text)
        kind = "user"
    if row is None:
        where = "staff account" if org is None else f"user of {org}"
        raise NotFound(f"no {where} has the login {login!r}")
    return Account(kind, str(row["id"]), str(row["username"]), row.get("email"))


async def reset_password(services: Services, account: Account, password: str) -> None:
    """Set the password (a user must choose their own at the next sign-in), end every
    session of the account and lift its sign-in blocks."""
    hashing.check_policy(password, username=account.username, email=account.email, field="password")
    hashed = await hashing.hash(password)
    now = clock.now_iso()
    org_id = _org_of(services, account)
    target = (account.kind, account.id)
    done = audit.event(
        "password_set_by_operator", None, org_id=org_id, target=target, actor_kind="operator"
    )
    if account.kind == "staff":
        await services.db.write(
            audit.along(lambda c: credentials.set_staff_password(c, account.id, hashed, now), done)
        )
    else:
        set_it = partial(
            credentials.set_by_operator, user_id=account.id, password_hash=hashed, now_iso=now
        )
        await services.db.write(audit.along(set_it, done))
    await services.tokens.revoke_accounts([account.id])
    await services.signin.throttle.clear(account.throttle_key, org_id, by="operator")


def _org_of(services: Services, account: Account) -> str | None:
    if account.kind != "user":
        return None
    user = services.db.read(lambda c: users.get(c, account.id))
    return None if user is None else user.org_id


async def unlock(services: Services, account: Account) -> int:
    """Lift every sign-in block of the account; how many there were."""
    if account.kind == "user" and services.db.read(lambda c: users.get(c, account.id)) is None:
        raise NotFound("the user no longer exists")
    org_id = _org_of(services, account)
    return await services.signin.throttle.clear(account.throttle_key, org_id, by="operator")


def read_password(stdin: TextIO) -> str:
    """The new password: typed twice at a prompt, or the first line of piped input."""
    if stdin.isatty():
        first = getpass.getpass("New password: ")
        if getpass.getpass("Repeat it: ") != first:
            raise ValidationError("password", "the two entries differ")
        return first
    line = stdin.readline()
    password = line.removesuffix("\n").removesuffix("\r")
    if not password:
        raise ValidationError("password", "none given on standard input")
    return password
