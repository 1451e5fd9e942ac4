"""The flow every account service shares (users, devices): the caller's grants, the target
account as the caller stands towards it, the 404 or 403 of a refused action, reading,
listing and deleting, and the audit events of account changes.

A kind's service (edge/accounts/users.py, devices.py) supplies how an account and what it
holds are found, what a view shows beside the row, and its own creates and patches. An
account the caller may not see at all is a 404; one they may see but not change, a 403.

Reach (docs/permissions.md, "Who may give access to whom"): access is given only to an
account the caller can read, since the grant makes the caller its admin: through the
access routes (`readable`, which edge/access/objects.py asks) and through
`project_permissions` on the account (`check_reach`), and then only to its home project.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic

from edge.access import holdings
from edge.access.engine import Caller, Permissions
from edge.access.holdings import Holdings
from edge.access.kinds import require_home
from edge.accounts import lists, views, writes
from edge.accounts.kind import A, Account, Kind, Relation, Row
from edge.accounts.lists import Filters
from edge.accounts.views import View
from edge.kernel import audit
from edge.kernel.errors import Denied, NotFound, ValidationError
from edge.kernel.listing import CursorCodec, ListQuery, Page, fetch
from edge.kernel.principal import Principal
from edge.tenancy.orgs import Orgs
from edge.tenancy.trash import Trash
from storage import projects as project_store
from storage.database import Database
from storage.records import AuditEvent, Org, Project
from storage.rows import Tx

Rows = list[Row]
Memo = dict[str | None, bool]  # what a kind remembers while it shows one page


@dataclass
class Target(Generic[A]):
    grants: Caller
    account: A
    held: Holdings
    rel: Relation


@dataclass(frozen=True)
class Creation:
    grants: Caller
    org: Org
    project_id: str | None
    defaults: Row  # from the org's settings, or its project's (edge/accounts/writes.py)


class Accounts(ABC, Generic[A]):
    """The shared flow; a kind's service supplies `_found`, `_relation` and `_extras`."""

    def __init__(
        self,
        db: Database,
        cursors: CursorCodec,
        orgs: Orgs,
        permissions: Permissions,
        trash: Trash,
        kind: Kind[A],
    ) -> None:
        self._db = db
        self.cursors = cursors
        self._orgs = orgs
        self._permissions = permissions
        self._trash = trash
        self.kind = kind

    # -- what a kind supplies ------------------------------------------------------------
    @abstractmethod
    def _found(self, account_id: str, org_id: str | None) -> tuple[A, Holdings] | None:
        """The account of this org and what it holds, or None."""

    @abstractmethod
    def _row(self, account_id: str, org_id: str | None) -> A | None:
        """The account of this org alone, or None: a point query, whatever it holds."""

    @abstractmethod
    def _relation(self, grants: Caller, row: A, held: Holdings, memo: Memo) -> Relation:
        """How the caller stands towards it (`memo`: what may be kept for one page)."""

    @abstractmethod
    def _extras(self, account_ids: list[str]) -> dict[str, Row]:
        """What the views show beside each row (edge/accounts/views.py `present`)."""

    # -- context -------------------------------------------------------------------------
    def grants(self, principal: Principal) -> Caller:
        if principal.org_id is None:
            raise Denied(
                f"{self.kind.noun}s live in an organization: staff must sign in with scope=<org>"
            )
        return self._permissions.caller(principal)

    def target(self, principal: Principal, account_id: str) -> Target[A]:
        """The account as the caller stands towards it; 404 outside the caller's org."""
        grants = self.grants(principal)
        found = self._found(account_id, principal.org_id)
        if found is None:
            raise NotFound(f"{self.kind.noun} not found")
        row, held = found
        return Target(grants, row, held, self._relation(grants, row, held, {}))

    def readable(self, grants: Caller, account_id: str) -> bool:
        """Whether the caller may read this account (its GET is not a 404).

        An org admin is an admin over every account of its org (edge/accounts/standing.py),
        so for one the row alone answers, and what the account holds is not read: every
        grant asks this of its grantee, and a user of 4,000 groups took 0.35 s to read."""
        if grants.is_org_admin:
            return self._row(account_id, grants.principal.org_id) is not None
        found = self._found(account_id, grants.principal.org_id)
        return found is not None and self._relation(grants, *found, {}).read

    def require(self, target: Target[A], action: str) -> None:
        rel = target.rel
        allowed = {"read": rel.read, "update": rel.update}.get(action, rel.delete)
        if not allowed:
            if not rel.read:
                raise NotFound(f"{self.kind.noun} not found")
            raise Denied(f"Not permitted to {action} this {self.kind.name}")

    def check_reach(self, target: Target[A], body: Mapping[str, Any], apart: set[str]) -> None:
        """The fields `apart` (access given, a device's owner) need no right to update the
        account, but it must be in sight: access goes only to accounts the caller can read."""
        if set(body) - apart or not body:
            self.require(target, "update")
        if apart & set(body):
            self.require(target, "read")

    def project_access(
        self, principal: Principal, target: Target[A], body: Mapping[str, Any]
    ) -> list[writes.AccessChange]:
        """The access a patch gives the account, in the session's project, else in the
        account's home project; project access only to its home project (the rule of the
        access routes, edge/access/kinds.py)."""
        account = target.account
        project_id = principal.project_id or account.project_id
        if "project_permissions" in body:
            require_home("project_permissions", self.kind.name, account.project_id, project_id)
        return self.access_changes(target.grants, body, project_id, account.org_id)

    def access_changes(
        self, grants: Caller, body: Mapping[str, Any], project_id: str | None, org_id: str
    ) -> list[writes.AccessChange]:
        return writes.access_changes(grants, dict(body), project_id, org_id, self.kind.name)

    def write_access(
        self, conn: Tx, account: Account, actor: str, changes: list[writes.AccessChange]
    ) -> bool:
        """Inside the account's write; True when a change took admin status away."""
        name = self.kind.name
        lost = [
            writes.write_access(conn, account.org_id, account.id, name, actor, c) for c in changes
        ]
        return any(lost)

    def creating(self, principal: Principal, body: Mapping[str, Any]) -> Creation:
        """Who creates an account, in which org and project (see `home_project`), with
        which defaults; refused unless the caller may create this kind there."""
        grants = self.grants(principal)
        org = self._orgs.get_row(principal.org_id or "")
        project = self.home_project(principal, body.get("project_id"))
        project_id = project.id if project else None
        grants.require(self.kind.name, "create", project_id=project_id)
        return Creation(grants, org, project_id, writes.defaults(org, project, self.kind.name))

    def home_project(self, principal: Principal, given: Any) -> Project | None:
        """The project a new account is created in: the session's, or `project_id` if given."""
        if principal.project_id and given not in (None, principal.project_id):
            raise ValidationError("project_id", "must be the project of this session")
        project_id = principal.project_id or given
        if project_id is None:
            return None
        org_id = principal.org_id or ""
        project = self._db.read(lambda c: project_store.get_in_org(c, org_id, project_id))
        if project is None or not project.is_active:
            raise ValidationError("project_id", "does not name an active project of this org")
        return project

    # -- reading -------------------------------------------------------------------------
    def present(
        self, grants: Caller, row: A, held: Holdings, rel: Relation, view: View, extra: Row
    ) -> Row:
        return views.present(grants, self.kind, row, held, rel, view, extra)

    async def list(self, principal: Principal, query: ListQuery, filters: Filters) -> Page:
        grants = self.grants(principal)
        pii = grants.pii_admin_only()
        lists.guard_query(grants, self.kind, query, pii)
        scope = lists.scope(grants, self.kind, filters)
        searching = query.search is not None
        query, scope = lists.normalized(self.kind, query, scope)
        page = await fetch(self._db, self.kind.listing, query, *scope, searching=searching)
        view = View(filters.project_id or principal.project_id, filters.group_id, pii)
        page.rows = self._present_page(grants, page.rows, view)
        return page

    def _present_page(self, grants: Caller, rows: Sequence[A], view: View) -> Rows:
        if not rows:
            return []
        org_id, ids = rows[0].org_id, [r.id for r in rows]
        held = holdings.of_accounts(self._db, org_id, ids)
        extras = self._extras(ids)
        memo: Memo = {}
        out = []
        for row in rows:
            rel = self._relation(grants, row, held[row.id], memo)
            out.append(self.present(grants, row, held[row.id], rel, view, extras[row.id]))
        return out

    # -- deleting ------------------------------------------------------------------------
    async def delete(
        self, principal: Principal, account_id: str, *, force: bool, permanent: bool
    ) -> None:
        """To the trash unless `permanent` (edge/tenancy/trash.py)."""
        target = self.target(principal, account_id)
        self.require(target, "delete")
        await self._trash.delete(
            principal,
            self.kind.name,
            target.account,
            force=force,
            may_force=target.rel.admin,
            permanent=permanent,
        )

    # -- the audit log -------------------------------------------------------------------
    def event(
        self,
        action: str,
        actor: Principal | None,
        account: Account,
        body: Row | None = None,
        actor_kind: str | None = None,
    ) -> AuditEvent:
        """`{kind}_{action}` done to an account (by `actor`, or the operator); for a
        create or update, which fields were sent and the values that change its standing
        (`changed_fields`)."""
        return audit.event(
            f"{self.kind.name}_{action}",
            actor,
            org_id=account.org_id,
            target=(self.kind.name, account.id),
            details=changed_fields(body) if body is not None else None,
            actor_kind=actor_kind,
        )


def require_admin_fields(body: Mapping[str, Any], is_admin: bool, names: Sequence[str]) -> None:
    for name in names:
        if name in body and not is_admin:
            raise Denied(f"{name}: only admins may set it")


def changed_fields(body: Mapping[str, Any]) -> dict[str, Any]:
    """What a create or update of an account records: the names of the fields sent (never
    their values), and the values that change its standing: `is_active` (suspension),
    admin status given or taken through `org_permissions` / `project_permissions`
    (`org_admin`, `project_admin`), and a device's `iot_scopes` (no secret: the topics it
    may use)."""
    details: dict[str, Any] = {
        "fields": sorted(k for k in body if not any(w in k for w in audit.SECRET_WORDS))
    }
    if "is_active" in body:
        details["is_active"] = bool(body["is_active"])
    for block, name in (("org_permissions", "org_admin"), ("project_permissions", "project_admin")):
        given = body.get(block)
        if isinstance(given, Mapping) and "is_admin" in given:
            details[name] = bool(given["is_admin"])
    if isinstance(body.get("iot_scopes"), Mapping):
        details["iot_scopes"] = sorted(str(scope) for scope in body["iot_scopes"])
    return details
