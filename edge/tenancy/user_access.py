"""How a caller stands towards a user: what they may do, and what they may see.

Every decision is asked of the permission engine (`edge/access/permissions.py`); this module
only gathers what the engine needs about the target user (their home project, the groups
they belong to, whether they are an admin) and applies the rules of docs/permissions.md
that concern users: group reach never covers org or project admins, non-admins never
act on admins, everyone may read and update themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from edge.access.permissions import Grants
from storage.user_scopes import Reach

Row = dict[str, Any]


@dataclass
class Holdings:
    """What one user holds. Access objects are their own; admin status counts roles too."""

    org_access: Row | None = None
    project_access: dict[str, Row] = field(default_factory=dict)
    group_access: dict[str, Row] = field(default_factory=dict)
    role_ids: list[str] = field(default_factory=list)
    group_projects: dict[str, str | None] = field(default_factory=dict)
    is_org_admin: bool = False
    admin_projects: set[str] = field(default_factory=set)

    @property
    def is_admin(self) -> bool:
        """An org or project admin: a user whom non-admins and group admins never act on."""
        return self.is_org_admin or bool(self.admin_projects)

    @property
    def member_groups(self) -> list[str]:
        return [g for g, row in self.group_access.items() if row["is_active"]]

    @property
    def member_projects(self) -> list[str]:
        return [p for p, row in self.project_access.items() if row["is_active"]]

    def add(self, row: Row) -> None:
        kind, target = row["kind"], str(row["target_id"])
        admin = bool(row["is_admin"]) and bool(row["is_active"]) and bool(row["target_active"])
        if kind == "org":
            self.is_org_admin = self.is_org_admin or admin
        elif kind == "project" and admin:
            self.admin_projects.add(target)
        if row["via_role"]:
            return
        if kind == "org":
            self.org_access = row
        elif kind == "project":
            self.project_access[target] = row
        elif kind == "group":
            self.group_access[target] = row
            self.group_projects[target] = row["group_project_id"]
        elif kind == "role" and row["is_active"]:
            self.role_ids.append(target)


def holdings_by_user(rows: Iterable[Row], user_ids: Iterable[str]) -> dict[str, Holdings]:
    out = {user_id: Holdings() for user_id in user_ids}
    for row in rows:
        out[str(row["holder"])].add(row)
    return out


@dataclass(frozen=True)
class Relation:
    """The caller towards one user. `admin`: sees admin-only fields, sets restricted
    attributes, may force a delete."""

    is_self: bool
    admin: bool
    read: bool
    update: bool
    delete: bool


def relation(grants: Grants, user: Row, held: Holdings) -> Relation:
    me = grants.principal
    is_self = me.kind == "user" and me.account_id == user["id"]
    admin = _admin_over(grants, user, held)
    read = is_self or admin or _reaches(grants, user, held, "read")
    update = is_self or _may_act(grants, user, held, "update")
    return Relation(is_self, admin, read, update, _may_act(grants, user, held, "delete"))


def _admin_over(grants: Grants, user: Row, held: Holdings) -> bool:
    if grants.is_org_admin:
        return True
    if held.is_org_admin:
        return False
    if grants.project(user["project_id"]).is_admin:
        return True
    return not held.is_admin and any(_group_admin(grants, held, g) for g in held.member_groups)


def _group_admin(grants: Grants, held: Holdings, group_id: str) -> bool:
    return (
        grants.is_group_admin(group_id)
        or grants.project(held.group_projects.get(group_id)).is_admin
    )


def _reaches(grants: Grants, user: Row, held: Holdings, action: str) -> bool:
    """Whether a level that covers the user lets the caller do `action` (admins aside)."""
    if grants.may("user", action, project_id=user["project_id"]):
        return True
    if action == "read" and any(
        grants.project(p).allows("user", "read") for p in held.member_projects
    ):
        return True
    return any(
        grants.group(g).allows("user", action) or _group_admin(grants, held, g)
        for g in held.member_groups
    )


def _may_act(grants: Grants, user: Row, held: Holdings, action: str) -> bool:
    """Update or delete: reach, and non-admins never act on admins (so neither does a
    group admin nor a group-level block, which never cover org or project admins)."""
    if not _reaches(grants, user, held, action):
        return False
    if held.is_org_admin and not grants.is_org_admin:
        return False
    if held.admin_projects and not grants.is_org_admin:
        return any(grants.project(p).is_admin for p in held.admin_projects)
    return True


def reach(grants: Grants) -> Reach | None:
    """The users a caller may list; None when they may see every user of the org."""
    if grants.org.allows("user", "read"):
        return None
    projects = [p for p, level in grants.projects.items() if level.allows("user", "read")]
    groups = [
        g
        for g in grants.groups
        if grants.group(g).allows("user", "read") or grants.is_group_admin(g)
    ]
    admin_projects = [p for p, level in grants.projects.items() if level.is_admin]
    return Reach(grants.principal.account_id, projects, groups, admin_projects)


def may_view(grants: Grants, rel: Relation, kind: str) -> bool:
    """Whether the caller may see which projects, groups or roles a user holds."""
    return rel.is_self or grants.org.allows(kind, "read")
