"""Passwords: Argon2id hashing (off the event loop), the policy, and the two flows that
change one: PUT /v2/auth/password and POST /v2/auth/forgot-password (docs/passwords.md).
"""

from __future__ import annotations

import secrets
from functools import partial
from typing import TYPE_CHECKING, Any

from edge.auth import reset_tokens
from edge.delivery.messages import Recipient
from edge.kernel import audit, clock
from edge.kernel.errors import Unauthenticated, ValidationError
from edge.kernel.principal import Principal
from storage import credentials, staff, users
from storage.database import Database
from storage.records import Org, Project, User
from storage.rows import Tx

if TYPE_CHECKING:
    from edge.auth.tokens import Tokens
    from edge.delivery.messages import Messages
    from edge.tenancy.projects import Projects

from edge.auth.hashing import check_policy, hash, verify

# -- the flows ----------------------------------------------------------------------------
FORGOT_ANSWER = "If an account matches, a message is on its way to it"
TEMPORARY_PASSWORD_BYTES = 18


class Passwords:
    """Changing a password (signed in, or with a reset token) and asking for a reset."""

    def __init__(
        self, db: Database, tokens: Tokens, projects: Projects, messages: Messages
    ) -> None:
        self._db = db
        self._tokens = tokens
        self._projects = projects
        self._messages = messages

    async def change(self, who: Principal, old: str | None, new: str) -> None:
        """PUT /v2/auth/password, signed in: the current password proves it is the owner."""
        if not old:
            raise ValidationError("old_password", "is required")
        account: User | dict[str, Any] | None
        if who.kind == "staff":
            account = self._db.read(lambda c: staff.get(c, who.account_id))
        elif who.kind == "user":
            account = self._db.read(lambda c: users.get(c, who.account_id))
        else:
            raise ValidationError(None, "Only users and staff have passwords")
        if account is None:
            raise Unauthenticated("Account no longer exists")
        check_policy(
            new, username=account["username"], email=account["email"], field="new_password"
        )
        if not await verify(account["password_hash"], old):
            raise ValidationError("old_password", "is incorrect")
        if new == old:
            raise ValidationError("new_password", "must differ from the current password")
        hashed = await hash(new)
        now = clock.now_iso()
        changed = audit.event("password_changed", who, target=(who.kind, who.account_id))
        if who.kind == "staff":
            await self._db.write(
                audit.along(
                    lambda c: credentials.set_staff_password(c, who.account_id, hashed, now),
                    changed,
                )
            )
        else:
            set_it = partial(_set, user_id=who.account_id, hashed=hashed, now=now, token=None)
            await self._db.write(audit.along(set_it, changed))
        await self._tokens.revoke_accounts([who.account_id])

    async def reset(self, token: str, new: str) -> None:
        """PUT /v2/auth/password with a reset token (the route guard told it apart)."""
        user_id = reset_tokens.check(self._db, token)
        account = self._db.read(lambda c: users.get(c, user_id))
        if account is None or not account["is_active"]:
            raise ValidationError(None, reset_tokens.INVALID)
        check_policy(
            new, username=account["username"], email=account["email"], field="new_password"
        )
        hashed = await hash(new)
        now = clock.now_iso()
        owner = Principal("user", user_id, None, account["org_id"])
        details = {"by": "reset_link"}
        done = audit.event("password_reset", owner, target=("user", user_id), details=details)
        set_it = partial(_set, user_id=user_id, hashed=hashed, now=now, token=token)
        await self._db.write(audit.along(set_it, done))
        await self._tokens.revoke_accounts([user_id])

    async def forgot(self, form: dict[str, str]) -> str:
        """POST /v2/auth/forgot-password: the same answer after the same work, whether or
        not an account matches; a matching active user gets a reset token by mail, or a new
        invitation when they never chose a first password."""
        client_id = (form.get("client_id") or "").strip()
        if not client_id:
            raise ValidationError("client_id", "is required")
        login = next((form[k].strip() for k in LOGIN_KEYS if (form.get(k) or "").strip()), "")
        if not login:
            raise ValidationError(None, "username, email or phone_number is required")
        org, project = self._projects.resolve_client(client_id)
        account = self._find(org, project, login)
        temporary = secrets.token_urlsafe(TEMPORARY_PASSWORD_BYTES)
        hashed = await hash(temporary)  # every path pays for one hash
        if account is None or not account["is_active"] or not org["is_active"]:
            await self._db.write(lambda c: None)  # the work of issuing
            await self._db.write(lambda c: None)  # the work of queueing the mail
        elif account["has_temporary_password"]:
            await self._db.write(
                lambda c: credentials.set_temporary_password(
                    c, account["id"], hashed, clock.now_iso()
                )
            )
            await self._messages.invitation(self._recipient(org, project, account), temporary)
        else:
            hours = reset_tokens.hours_for(org, project)
            token = await reset_tokens.issue(self._db, account, hours)
            await self._messages.account_recovery(
                self._recipient(org, project, account), token, hours
            )
        return FORGOT_ANSWER

    def _find(self, org: Org, project: Project | None, login: str) -> User | None:
        return self._projects.find_login(org, project, login)

    def _recipient(self, org: Org, project: Project | None, user: User) -> Recipient:
        return Recipient(
            user_id=user["id"],
            email=user.get("email") or None,
            phone=user.get("phone_number") or None,
            username=user["username"],
            org_id=org["id"],
            org_name=org["name"],
            project_id=None if project is None else project["id"],
            project_name=None if project is None else project["name"],
            first_name=user.get("first_name"),
            last_name=user.get("last_name"),
            nickname=user.get("nickname"),
            locale=user.get("locale") or "en-US",
            zoneinfo=user.get("zoneinfo") or "UTC",
        )


LOGIN_KEYS = ("username", "email", "phone_number")


def _set(conn: Tx, user_id: str, hashed: str, now: str, token: str | None) -> None:
    """Store the new password; with a reset token, use it up in the same transaction."""
    if token is not None and reset_tokens.redeem(conn, token) != user_id:
        raise ValidationError(None, reset_tokens.INVALID)
    credentials.set_password(conn, user_id, hashed, now)
    credentials.forget_reset_tokens(conn, user_id)
