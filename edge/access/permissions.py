"""The permission engine: one place that decides who may do what.

A caller's grants are the access objects they hold, merged with those of every active
role they hold (a role's permissions count as their own). Decisions read these grants:

- staff acting in an organization (a scoped token) and org admins may do anything there;
- an org-level permission block (for example `user_permissions.can_update`) applies to
  every resource of that kind in the org, including project-level ones;
- a project admin, or a project-level block, applies to the resources of that project;
- a group admin, or a group-level block, applies to the members of that group, but never
  to org or project admins.

Update and delete never require read. Everyone may update and deactivate themselves.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from edge.errors import Denied
from edge.principal import Principal
from storage import access as store
from storage.database import Database

RESOURCES = ("user", "device", "group", "role", "project")
ACTIONS = ("create", "read", "update", "delete")
BLOCKS = {r: f"{r}_permissions" for r in RESOURCES}


@dataclass(frozen=True)
class Crud:
    can_create: bool = False
    can_read: bool = False
    can_update: bool = False
    can_delete: bool = False

    def allows(self, action: str) -> bool:
        return bool(getattr(self, f"can_{action}"))

    def merge(self, other: Crud) -> Crud:
        return Crud(*(a or b for a, b in zip(self.flags(), other.flags(), strict=True)))

    def flags(self) -> tuple[bool, bool, bool, bool]:
        return (self.can_create, self.can_read, self.can_update, self.can_delete)

    def to_json(self) -> dict[str, bool]:
        return dict(
            zip(("can_create", "can_read", "can_update", "can_delete"), self.flags(), strict=True)
        )

    @classmethod
    def from_json(cls, raw: Any) -> Crud:
        raw = raw if isinstance(raw, dict) else {}
        return cls(
            *(
                bool(raw.get(k, False))
                for k in ("can_create", "can_read", "can_update", "can_delete")
            )
        )


NO_CRUD = Crud()
FULL_CRUD = Crud(True, True, True, True)


@dataclass(frozen=True)
class Level:
    """Permissions held at one level: the org, one project, or one group."""

    is_admin: bool = False
    can_read: bool = False
    can_update: bool = False
    blocks: Mapping[str, Crud] = field(default_factory=dict)

    def allows(self, resource: str, action: str) -> bool:
        return self.is_admin or self.blocks.get(resource, NO_CRUD).allows(action)

    def merge(self, other: Level) -> Level:
        names = set(self.blocks) | set(other.blocks)
        return Level(
            self.is_admin or other.is_admin,
            self.can_read or other.can_read,
            self.can_update or other.can_update,
            {n: self.blocks.get(n, NO_CRUD).merge(other.blocks.get(n, NO_CRUD)) for n in names},
        )

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Level:
        raw = json.loads(row["permissions"])
        blocks = {r: Crud.from_json(raw.get(BLOCKS[r])) for r in RESOURCES if BLOCKS[r] in raw}
        return cls(bool(row["is_admin"]), bool(row["can_read"]), bool(row["can_update"]), blocks)


ADMIN_LEVEL = Level(True, True, True, {r: FULL_CRUD for r in RESOURCES})


@dataclass
class Grants:
    principal: Principal
    org: Level = field(default_factory=Level)
    projects: dict[str, Level] = field(default_factory=dict)
    groups: dict[str, Level] = field(default_factory=dict)
    group_projects: dict[str, str | None] = field(default_factory=dict)
    roles: frozenset[str] = frozenset()

    @property
    def is_org_admin(self) -> bool:
        return self.org.is_admin

    def project(self, project_id: str | None) -> Level:
        return self.projects.get(project_id, Level()) if project_id else Level()

    def group(self, group_id: str) -> Level:
        return self.groups.get(group_id, Level())

    def is_project_admin(self, project_id: str | None) -> bool:
        return self.is_org_admin or self.project(project_id).is_admin

    def is_group_admin(self, group_id: str, project_id: str | None = None) -> bool:
        """Admin of the group directly, or of its project (`project_id` when the caller
        holds no access to the group itself, so its project is not known from the grants)."""
        if self.is_org_admin or self.group(group_id).is_admin:
            return True
        return self.project(project_id or self.group_projects.get(group_id)).is_admin

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

    def admin_reach(self) -> tuple[bool, set[str], set[str]]:
        """Where the caller is an admin: the whole org, these projects, these groups."""
        projects = {p for p, level in self.projects.items() if level.is_admin}
        groups = {g for g in self.groups if self.is_group_admin(g)}
        return self.is_org_admin, projects, groups


def load(db: Database, principal: Principal) -> Grants:
    """The caller's merged grants inside their organization (point queries, inline)."""
    if principal.org_id is None:
        return Grants(principal)
    if principal.is_staff:
        return Grants(principal, org=ADMIN_LEVEL)
    roles = db.read(lambda c: store.held_roles(c, principal.account_id))
    rows = db.read(
        lambda c: store.of_grantees(c, principal.org_id or "", [principal.account_id, *roles])
    )
    grants = Grants(principal, roles=frozenset(roles))
    for row in rows:
        _add(grants, row)
    if grants.org.is_admin:
        grants.org = ADMIN_LEVEL
    return grants


def _add(grants: Grants, row: Mapping[str, Any]) -> None:
    level = Level.from_row(row)
    target = str(row["target_id"])
    if row["kind"] == "org":
        grants.org = grants.org.merge(level)
    elif row["kind"] == "project" and row["target_active"]:
        grants.projects[target] = grants.project(target).merge(level)
    elif row["kind"] == "group" and row["target_active"]:
        grants.groups[target] = grants.group(target).merge(level)
        grants.group_projects[target] = row["group_project_id"]
