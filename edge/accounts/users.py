"""Users of an organization: create, read, list, update, suspend and delete.

The flow every account shares is edge/accounts/service.py, and what a user has of its own
(logins, passwords, the view's fields) is edge/accounts/user_kind.py. Here: what a GET
keeps between requests (edge/accounts/user_facts.py), the password and the invitation of a
new user, phone numbers, ending the sessions of a user suspended or no longer an admin,
and who may remove a user's MFA.
"""

from __future__ import annotations

from typing import Any

from edge.access.engine import Caller, Permissions
from edge.access.holdings import Holdings
from edge.accounts import user_kind as kind
from edge.accounts.kind import Relation, Row
from edge.accounts.service import Accounts, Memo, Target, require_admin_fields
from edge.accounts.standing import relation
from edge.accounts.user_facts import Facts, UserFacts
from edge.accounts.user_kind import USER
from edge.accounts.views import View
from edge.auth.tokens import Tokens
from edge.delivery.messages import Messages
from edge.kernel import audit, clock
from edge.kernel.errors import Denied, NotFound, ValidationError
from edge.kernel.listing import CursorCodec
from edge.kernel.principal import Principal
from edge.tenancy.orgs import Orgs
from edge.tenancy.trash import Trash
from storage import users as store
from storage.database import Database
from storage.records import User
from storage.rows import Tx

APART = {"project_permissions"}  # given to a user in sight, without updating the user
# Where POST /v2/auth/forgot-password sends a reset: the stored form of each channel
CHANNELS = {"email": "email_folded", "phone_number": "phone_folded"}


class Users(Accounts[User]):
    def __init__(
        self,
        db: Database,
        cursors: CursorCodec,
        orgs: Orgs,
        tokens: Tokens,
        permissions: Permissions,
        trash: Trash,
        messages: Messages | None = None,
    ) -> None:
        super().__init__(db, cursors, orgs, permissions, trash, USER)
        self._tokens = tokens
        self._messages = messages
        self.facts = UserFacts(db)

    # -- what the user kind supplies -----------------------------------------------------
    def _found(self, user_id: str, org_id: str | None) -> tuple[User, Holdings] | None:
        facts = self._facts(user_id, org_id)
        return None if facts is None else (facts.user, facts.held)

    def _row(self, user_id: str, org_id: str | None) -> User | None:
        user = self.facts.user_of(user_id)
        return user if user is not None and user.org_id == org_id else None

    def _facts(self, user_id: str, org_id: str | None) -> Facts | None:
        facts = self.facts.of(user_id)
        return facts if facts is not None and facts.user.org_id == org_id else None

    def _relation(self, grants: Caller, row: User, held: Holdings, memo: Memo) -> Relation:
        return relation(grants, USER, row, held)

    def _extras(self, account_ids: list[str]) -> dict[str, Row]:
        seen = self._db.read(lambda c: store.last_seen(c, account_ids))
        return {user_id: {"last_seen": seen.get(user_id)} for user_id in account_ids}

    # -- reading -------------------------------------------------------------------------
    def get(self, principal: Principal, user_id: str) -> Row:
        """The user as this caller may see them. An answer given before is given again
        while the facts it came from are kept (see edge/accounts/user_facts.py); the
        copy handed back shares its values with it, so it is read, never changed."""
        grants = self.grants(principal)
        facts = self._facts(user_id, principal.org_id)
        if facts is None:
            raise NotFound("User not found")
        answer = facts.answers.get(principal)
        if answer is None:
            user, held = facts.user, facts.held
            target = Target(grants, user, held, relation(grants, USER, user, held))
            self.require(target, "read")
            picture, seen = self.facts.shown(facts)
            view = View(principal.project_id, None, grants.pii_admin_only(), single=True)
            extra = {"picture": picture, "last_seen": seen}
            answer = self.present(grants, user, held, target.rel, view, extra)
            if picture is None:  # see edge/accounts/user_facts.py
                facts.remember(principal, answer)
        return dict(answer)

    def require_admin_over(self, target: Target[User]) -> None:
        """Org admins, project admins, and group admins over members of their groups (not
        over admins), may remove a user's MFA or start their account recovery."""
        if target.rel.admin and not target.rel.is_self:
            return
        if not target.rel.read:
            raise NotFound("User not found")
        raise Denied("Only an admin over this user may do this")

    # -- writing -------------------------------------------------------------------------
    async def create(self, principal: Principal, body: dict[str, Any]) -> str:
        creation = self.creating(principal, body)
        grants, org, project_id = creation.grants, creation.org, creation.project_id
        is_admin = grants.is_org_admin or grants.project(project_id).is_admin
        changes = self.access_changes(grants, body, project_id, org.id)
        require_admin_fields(body, is_admin, ("restricted_custom_attributes", "is_active"))
        columns = kind.columns(body)
        secret = await kind.initial_password(body, columns.get("username") or columns["email"])
        row = kind.with_secret(
            org.id, project_id, principal.actor, columns, creation.defaults, secret
        )

        def write(conn: Tx) -> None:
            logins = ("email_folded", "username_folded", "phone_folded")
            kind.check_unique(conn, org.id, row.id, {n: getattr(row, n) for n in logins})
            store.create(conn, row)
            self.write_access(conn, row, principal.actor, changes)

        created = self.event("created", principal, row, body)
        await self._db.write(audit.along(write, created))
        if secret.temporary and self._messages is not None:
            messages = self._messages
            await messages.invitation(messages.recipient(row.id), secret.plain)
        return row.id

    async def patch(self, principal: Principal, user_id: str, body: dict[str, Any]) -> None:
        target = self.target(principal, user_id)
        user = target.account
        self.check_reach(target, body, APART)
        changes = self.project_access(principal, target, body)
        require_admin_fields(body, target.rel.admin, ("restricted_custom_attributes",))
        columns = kind.columns(body)
        _require_channel_rights(target, columns)
        if "phone_number" in columns and columns["phone_number"] != user.phone_number:
            _check_phone_change(user)
            columns["phone_number_verified"] = False
        if columns:
            columns.update(last_updated_date=clock.now_iso(), last_updated_by=principal.actor)

        def write(conn: Tx) -> bool:
            kind.check_unique(conn, user.org_id, user_id, columns)
            if columns and not store.patch(conn, user_id, columns):
                raise NotFound("User not found")
            return self.write_access(conn, user, principal.actor, changes)

        updated = self.event("updated", principal, user, body)
        lost_admin = await self._db.write(audit.along(write, updated))
        if lost_admin or (user.is_active and columns.get("is_active") is False):
            await self._tokens.revoke_accounts([user_id])


def _require_channel_rights(target: Target[User], columns: dict[str, Any]) -> None:
    """Whoever receives a user's reset mail owns the account (the public forgot-password
    route), so moving their e-mail or phone number elsewhere is a recovery step: only the
    user themself or an admin over them (as for `require_admin_over`) may; other holders of
    user update rights may not. The same address spelled in another case is no move."""
    user, rel = target.account, target.rel
    if rel.is_self or rel.admin:
        return
    for name, folded in CHANNELS.items():
        if name in columns and columns[folded] != getattr(user, folded):
            raise Denied(f"Only an admin over this user may change their {name}")


def _check_phone_change(user: User) -> None:
    if user.sms_mfa_enabled:
        raise ValidationError(
            "phone_number", "turn SMS MFA off before changing the phone number it uses"
        )
