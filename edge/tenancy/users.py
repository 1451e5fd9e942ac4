"""Users of an organization: create, read, list, update, suspend and delete.

Who may do what is decided by the permission engine through `edge/accounts/standing.py`;
what a caller sees by `edge/accounts/views.py`. A user the caller may not see at all is a
404; one they may see but not change is a 403.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from edge import audit, clock
from edge.access import holdings
from edge.access.engine import Caller, Permissions
from edge.access.holdings import Holdings
from edge.accounts import lists, writes
from edge.accounts import user_kind as kind
from edge.accounts.kind import Relation
from edge.accounts.lists import Filters
from edge.accounts.standing import relation
from edge.accounts.user_kind import USER
from edge.accounts.views import View, present
from edge.auth.tokens import Tokens
from edge.delivery.messages import Messages
from edge.errors import DeleteProtected, Denied, NotFound, ValidationError
from edge.listing import CursorCodec, ListQuery, Page, fetch
from edge.principal import Principal
from edge.tenancy.orgs import Orgs
from edge.tenancy.trash import Trash
from edge.tenancy.user_facts import Facts, UserFacts
from storage import projects as project_store
from storage import users as store
from storage.database import Database
from storage.records import AuditEvent, Project, User
from storage.rows import Tx

Row = dict[str, Any]
Rows = list[Row]
Changes = list[writes.AccessChange]


@dataclass
class Target:
    grants: Caller
    user: User
    held: Holdings
    rel: Relation
    facts: Facts


class Users:
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
        self._db = db
        self.cursors = cursors
        self._orgs = orgs
        self._tokens = tokens
        self._permissions = permissions
        self._trash = trash
        self._messages = messages
        self.facts = UserFacts(db)

    # -- context -------------------------------------------------------------------------
    def grants(self, principal: Principal) -> Caller:
        if principal.org_id is None:
            raise Denied("Users live in an organization: staff must sign in with scope=<org>")
        return self._permissions.caller(principal)

    def holdings(self, org_id: str, user_ids: Sequence[str]) -> dict[str, Holdings]:
        return holdings.of_accounts(self._db, org_id, user_ids)

    def target(self, principal: Principal, user_id: str) -> Target:
        """The user as the caller stands towards them; 404 outside the caller's org."""
        grants = self.grants(principal)
        return self._target(grants, self._facts(principal, user_id))

    def _facts(self, principal: Principal, user_id: str) -> Facts:
        facts = self.facts.of(user_id)
        if facts is None or facts.user.org_id != principal.org_id:
            raise NotFound("User not found")
        return facts

    def _target(self, grants: Caller, facts: Facts) -> Target:
        user, held = facts.user, facts.held
        return Target(grants, user, held, relation(grants, USER, user, held), facts)

    def readable(self, grants: Caller, user_id: str) -> bool:
        """Whether the caller may read this user (its GET is not a 404)."""
        facts = self.facts.of(user_id)
        if facts is None or facts.user.org_id != grants.principal.org_id:
            return False
        return relation(grants, USER, facts.user, facts.held).read

    def require(self, target: Target, action: str) -> None:
        allowed = {"read": target.rel.read, "update": target.rel.update}.get(
            action, target.rel.delete
        )
        if not allowed:
            if not target.rel.read:
                raise NotFound("User not found")
            raise Denied(f"Not permitted to {action} this user")

    def _project(self, org_id: str, project_id: str) -> Project | None:
        return self._db.read(lambda c: project_store.get_in_org(c, org_id, project_id))

    # -- reading -------------------------------------------------------------------------
    def get(self, principal: Principal, user_id: str) -> Row:
        """The user as this caller may see them. An answer given before is given again
        while the facts it came from are kept (see edge/tenancy/user_facts.py); the
        copy handed back shares its values with it, so it is read, never changed."""
        grants = self.grants(principal)
        facts = self._facts(principal, user_id)
        answer = facts.answers.get(principal)
        if answer is None:
            target = self._target(grants, facts)
            self.require(target, "read")
            picture, seen = self.facts.shown(facts)
            view = View(principal.project_id, None, grants.pii_admin_only(), single=True)
            extra = {"picture": picture, "last_seen": seen}
            answer = present(grants, USER, target.user, target.held, target.rel, view, extra)
            if picture is None:  # see edge/tenancy/user_facts.py
                facts.remember(principal, answer)
        return dict(answer)

    async def list(self, principal: Principal, query: ListQuery, filters: Filters) -> Page:
        grants = self.grants(principal)
        pii = grants.pii_admin_only()
        lists.guard_query(grants, USER, query, pii)
        conditions = lists.scope(grants, USER, filters)
        query = lists.normalized(USER, query, conditions)
        sql, params = conditions.sql()
        page = await fetch(self._db, USER.listing, query, sql, params)
        view = View(filters.project_id or principal.project_id, filters.group_id, pii)
        page.rows = await self._present_page(grants, page.rows, view)
        return page

    async def _present_page(self, grants: Caller, rows: Sequence[User], view: View) -> Rows:
        if not rows:
            return []
        org_id, ids = rows[0].org_id, [r.id for r in rows]
        held = self.holdings(org_id, ids)
        seen = self._db.read(lambda c: store.last_seen(c, ids))
        out = []
        for row in rows:
            rel = relation(grants, USER, row, held[row.id])
            extra = {"last_seen": seen.get(row.id)}
            out.append(present(grants, USER, row, held[row.id], rel, view, extra))
        return out

    # -- writing -------------------------------------------------------------------------
    async def create(self, principal: Principal, body: dict[str, Any]) -> str:
        grants = self.grants(principal)
        org = self._orgs.get_row(principal.org_id or "")
        project = self._home_project(principal, body.get("project_id"))
        project_id = project.id if project else None
        grants.require("user", "create", project_id=project_id)
        is_admin = grants.is_org_admin or grants.project(project_id).is_admin
        changes = self._access_changes(grants, body, project_id, org.id)
        _require_admin_fields(body, is_admin, ("restricted_custom_attributes", "is_active"))
        columns = kind.columns(body)
        secret = await kind.initial_password(body, columns.get("username") or columns["email"])
        defaults = writes.defaults(org, project, USER.name)
        row = kind.with_secret(org.id, project_id, principal.actor, columns, defaults, secret)

        def write(conn: Tx) -> None:
            logins = ("email_folded", "username_folded", "phone_folded")
            kind.check_unique(conn, org.id, row.id, {n: getattr(row, n) for n in logins})
            store.create(conn, row)
            for change in changes:
                writes.write_access(conn, org.id, row.id, USER.name, principal.actor, change)

        created = _event("user_created", principal, org.id, row.id, body)
        await self._db.write(audit.along(write, created))
        if secret.temporary and self._messages is not None:
            messages = self._messages
            await messages.invitation(messages.recipient(row.id), secret.plain)
        return row.id

    async def patch(self, principal: Principal, user_id: str, body: dict[str, Any]) -> None:
        target = self.target(principal, user_id)
        user = target.user
        project_id = principal.project_id or user.project_id
        if set(body) - {"project_permissions"} or not body:
            self.require(target, "update")
        if "project_permissions" in body:  # access given: only to a user the caller can see
            self.require(target, "read")
            _check_home(user, project_id)
        changes = self._access_changes(target.grants, body, project_id, user.org_id)
        _require_admin_fields(body, target.rel.admin, ("restricted_custom_attributes",))
        columns = kind.columns(body)
        if "phone_number" in columns and columns["phone_number"] != user.phone_number:
            _check_phone_change(user)
            columns["phone_number_verified"] = False
        if columns:
            columns.update(last_updated_date=clock.now_iso(), last_updated_by=principal.actor)

        def write(conn: Tx) -> bool:
            kind.check_unique(conn, user.org_id, user_id, columns)
            if columns and not store.patch(conn, user_id, columns):
                raise NotFound("User not found")
            lost = [
                writes.write_access(conn, user.org_id, user_id, USER.name, principal.actor, c)
                for c in changes
            ]
            return any(lost)

        updated = _event("user_updated", principal, user.org_id, user_id, body)
        lost_admin = await self._db.write(audit.along(write, updated))
        if lost_admin or (user.is_active and columns.get("is_active") is False):
            await self._tokens.revoke_accounts([user_id])

    async def delete(
        self, principal: Principal, user_id: str, *, force: bool, permanent: bool
    ) -> None:
        target = self.target(principal, user_id)
        self.require(target, "delete")
        if force and not target.rel.admin:
            raise Denied("force: only admins may force a delete")
        if target.user.is_delete_protected and not force:
            raise DeleteProtected("User")
        await self._trash.delete(principal, "user", target.user, permanent=permanent)

    def _home_project(self, principal: Principal, given: Any) -> Project | None:
        """The project a new user is created in: the session's, or `project_id` if given."""
        if principal.project_id and given not in (None, principal.project_id):
            raise ValidationError("project_id", "must be the project of this session")
        project_id = principal.project_id or given
        if project_id is None:
            return None
        project = self._project(principal.org_id or "", project_id)
        if project is None or not project.is_active:
            raise ValidationError("project_id", "does not name an active project of this org")
        return project

    def _access_changes(
        self, grants: Caller, body: dict[str, Any], project_id: str | None, org_id: str
    ) -> Changes:
        return writes.access_changes(grants, body, project_id, org_id, USER.name)


def _require_admin_fields(body: dict[str, Any], is_admin: bool, names: Sequence[str]) -> None:
    for name in names:
        if name in body and not is_admin:
            raise Denied(f"{name}: only admins may set it")


def _check_home(user: User, project_id: str | None) -> None:
    """A user of one project gets access to that project only (as through the access
    routes, edge/access/kinds.py)."""
    if user.project_id is not None and project_id not in (None, user.project_id):
        raise ValidationError("project_permissions", "this user belongs to another project")


def _check_phone_change(user: User) -> None:
    if user.sms_mfa_enabled:
        raise ValidationError(
            "phone_number", "turn SMS MFA off before changing the phone number it uses"
        )


def _event(
    action: str, principal: Principal, org_id: str, user_id: str, body: dict[str, Any]
) -> AuditEvent:
    """What an admin changed: the names of the fields sent, never their values."""
    details = audit.changed_fields(body)
    return audit.event(action, principal, org_id=org_id, target=("user", user_id), details=details)
