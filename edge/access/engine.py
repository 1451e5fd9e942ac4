"""The permission engine: one place that decides who may do what.

A caller's standing is asked target by target. `Caller` knows the caller's active roles
(a handful: the org caps them) and their merged org-level permissions; everything else is
a point query on demand: the access the caller and their roles hold on *this* project or
*this* group, read through the unique (target_id, grantee_id) index and remembered for the
caller's next request. Nothing reads all the access a caller holds, so a check costs the
same at 10 grants and at 100,000 (docs/permissions.md).

The rules:
- staff acting in an organization (a scoped token) and org admins may do anything there;
- an org-level block (for example `user_permissions.can_update`) applies to every
  resource of that kind in the org, including project-level ones;
- a project admin, or a project-level block, applies to the resources of that project;
- a group admin, or a group-level block, applies to the members of that group, but never
  to org or project admins (the services apply that last rule).
Update and delete never require read. Everyone may update and deactivate themselves.

Callers are cached (edge/access/cache.py) and dropped whenever the access epoch moves,
which triggers bump on every write that could change an answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from edge.access.cache import EpochCache
from edge.access.levels import ADMIN_LEVEL, NO_LEVEL, Level
from edge.access.paths import PathGrants
from edge.kernel.errors import Denied
from edge.kernel.principal import Principal
from storage import access as store
from storage import epochs
from storage import groups as group_store
from storage import orgs as org_store
from storage import projects as project_store
from storage.database import Database
from storage.records import Access
from storage.rows import Tx

MEMO_LIMIT = 4096  # targets remembered per caller; past it the memo starts over


class Caller:
    """One principal's standing in their organization."""

    def __init__(self, db: Database, principal: Principal, roles: tuple[str, ...], org: Level):
        self._db = db
        self.principal = principal
        self.roles = frozenset(roles)
        self.grantees = (principal.account_id, *roles)
        self.org = org
        self._levels: dict[str, Level] = {}
        self._grants: dict[str, tuple[Access, ...]] = {}
        self._group_projects: dict[str, str | None] = {}
        self._admin_anywhere: bool | None = None
        self._settings: tuple[dict[str, Any], dict[str, Any]] | None = None

    @property
    def is_org_admin(self) -> bool:
        return self.org.is_admin

    def level(self, target_id: str | None) -> Level:
        """The caller's merged access on one project or group (an inactive one: none)."""
        if not target_id or self.principal.org_id is None:
            return NO_LEVEL
        found = self._levels.get(target_id)
        if found is None:
            found = self._levels[target_id] = Level.merged(self.grants_on(target_id))
        return found

    def grants_on(self, target_id: str) -> tuple[Access, ...]:
        """The active access objects the caller and its roles hold on one active target."""
        found = self._grants.get(target_id)
        if found is None:
            if len(self._grants) >= MEMO_LIMIT:
                self._grants.clear()
                self._levels.clear()
            rows = self._db.read(lambda c: store.held_on(c, target_id, self.grantees))
            found = self._grants[target_id] = tuple(rows)
        return found

    def path_grants(
        self, group_id: str, project_id: str | None, kind: str, *, legacy: bool
    ) -> PathGrants:
        """The caller's data (`kind` 'data') or file ('files') grants in one group."""
        column = "data_paths" if kind == "data" else "file_paths"
        grants = tuple(getattr(a, column) for a in self.grants_on(group_id))
        admin = self.is_group_admin(group_id, project_id)
        return PathGrants(grants, admin=admin, legacy=legacy)

    project = level
    group = level

    def group_project(self, group_id: str) -> str | None:
        if group_id not in self._group_projects:
            group = self._db.read(lambda c: group_store.get(c, group_id))
            self._group_projects[group_id] = group.project_id if group else None
        return self._group_projects[group_id]

    def is_project_admin(self, project_id: str | None) -> bool:
        return self.is_org_admin or self.project(project_id).is_admin

    def is_group_admin(self, group_id: str, project_id: str | None = None) -> bool:
        """Admin of the group directly, or of its project (looked up when not given)."""
        if self.is_org_admin or self.group(group_id).is_admin:
            return True
        return self.project(project_id or self.group_project(group_id)).is_admin

    def is_admin_anywhere(self) -> bool:
        """An org admin, or an admin of some active project."""
        if self._admin_anywhere is None:
            self._admin_anywhere = self.is_org_admin or self._db.read(
                lambda c: store.admin_of_any_project(c, self.grantees)
            )
        return self._admin_anywhere

    def admin_projects(self) -> list[str]:
        """The projects the caller administers (admin grants are few: a partial index)."""
        return self._db.read(lambda c: store.admin_projects(c, self.grantees))

    def settings(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The settings of the caller's org and of its session's project ({} for none),
        read once per cached caller: changing either bumps the access epoch."""
        if self._settings is None:
            self._settings = self._db.read(self._read_settings)
        return self._settings

    def _read_settings(self, conn: Tx) -> tuple[dict[str, Any], dict[str, Any]]:
        org_id, project_id = self.principal.org_id, self.principal.project_id
        if org_id is None:
            return ({}, {})
        org = org_store.get(conn, org_id)
        project = project_store.get_in_org(conn, org_id, project_id) if project_id else None
        return (org.settings if org else {}, project.settings if project else {})

    def pii_admin_only(self) -> bool:
        """Whether PII is shown to admins only (the org's setting or the session project's)."""
        org, project = self.settings()
        return bool(org.get("pii_admin_only", False) or project.get("pii_admin_only", False))

    def sees_all(self, resource: str) -> bool:
        """May read every resource of this kind in the org (lists need no filter)."""
        return self.org.allows(resource, "read")

    def may(
        self,
        resource: str,
        action: str,
        *,
        project_id: str | None = None,
        group_ids: Iterable[str] = (),
    ) -> bool:
        """Whether any level the resource lives in lets the caller do `action` on it."""
        if self.org.allows(resource, action):
            return True
        if project_id and self.project(project_id).allows(resource, action):
            return True
        return any(
            self.group(g).allows(resource, action) or self.is_group_admin(g) for g in group_ids
        )

    def require(self, resource: str, action: str, **where: Any) -> None:
        if not self.may(resource, action, **where):
            raise Denied(f"Not permitted to {action} this {resource}")


class Permissions:
    """Builds and caches callers; `caller(principal)` is the one way services get one."""

    def __init__(self, db: Database, *, cache: bool = True) -> None:
        self._db = db
        self.cache: EpochCache[Caller] | None = None
        if cache:
            self.cache = EpochCache(lambda: db.read_memo(epochs.KEY, epochs.read).access)

    def caller(self, principal: Principal) -> Caller:
        key = principal  # per session: a project-scoped session stands apart
        if self.cache is not None:
            found = self.cache.get(key)
            if found is not None:
                return found
        made = self._build(principal)
        if self.cache is not None:
            self.cache.put(key, made)
        return made

    def grantee(self, org_id: str, grantee_id: str) -> Caller:
        """What another account or role holds, asked the same way (rank checks)."""
        return self._build(Principal("user", grantee_id, None, org_id))

    def _build(self, principal: Principal) -> Caller:
        if principal.org_id is None:
            return Caller(self._db, principal, (), NO_LEVEL)
        if principal.is_staff:
            return Caller(self._db, principal, (), ADMIN_LEVEL)
        org_id = principal.org_id
        roles = tuple(self._db.read(lambda c: store.held_roles(c, principal.account_id)))
        grants = self._db.read(lambda c: store.held_on(c, org_id, (principal.account_id, *roles)))
        org = Level.merged(grants)
        return Caller(self._db, principal, roles, ADMIN_LEVEL if org.is_admin else org)
