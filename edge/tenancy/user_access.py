"""How a caller stands towards a user: what they may do, and what they may see.

Every decision is asked of the permission engine (`edge/access/engine.py`); this module
only gathers what the engine needs about the target user (their home project, the groups
they belong to, whether they are an admin) and applies the rules of docs/permissions.md
that concern users: group reach never covers org or project admins, non-admins never
act on admins, everyone may read and update themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from edge.access.engine import Caller
from edge.access.holdings import Holdings
from storage.records import User


@dataclass(frozen=True)
class Relation:
    """The caller towards one user. `admin`: sees admin-only fields, sets restricted
    attributes, may force a delete."""

    is_self: bool
    admin: bool
    read: bool
    update: bool
    delete: bool


def relation(grants: Caller, user: User, held: Holdings) -> Relation:
    me = grants.principal
    is_self = me.kind == "user" and me.account_id == user.id
    admin = _admin_over(grants, user, held)
    read = is_self or admin or _reaches(grants, user, held, "read")
    update = is_self or _may_act(grants, user, held, "update")
    return Relation(is_self, admin, read, update, _may_act(grants, user, held, "delete"))


def _admin_over(grants: Caller, user: User, held: Holdings) -> bool:
    if grants.is_org_admin:
        return True
    if held.is_org_admin:
        return False
    if grants.project(user.project_id).is_admin:
        return True
    return not held.is_admin and any(_group_admin(grants, held, g) for g in held.member_groups)


def _group_admin(grants: Caller, held: Holdings, group_id: str) -> bool:
    return grants.is_group_admin(group_id, held.group_projects.get(group_id))


def _reaches(grants: Caller, user: User, held: Holdings, action: str) -> bool:
    """Whether a level that covers the user lets the caller do `action` (admins aside)."""
    if grants.may("user", action, project_id=user.project_id):
        return True
    if action == "read" and any(
        grants.project(p).allows("user", "read") for p in held.member_projects
    ):
        return True
    return any(
        grants.group(g).allows("user", action) or _group_admin(grants, held, g)
        for g in held.member_groups
    )


def _may_act(grants: Caller, user: User, held: Holdings, action: str) -> bool:
    """Update or delete: reach, and non-admins never act on admins (so neither does a
    group admin nor a group-level block, which never cover org or project admins)."""
    if not _reaches(grants, user, held, action):
        return False
    if held.is_org_admin and not grants.is_org_admin:
        return False
    if held.admin_projects and not grants.is_org_admin:
        return any(grants.project(p).is_admin for p in held.admin_projects)
    return True


def may_view(grants: Caller, rel: Relation, kind: str) -> bool:
    """Whether the caller may see which projects, groups or roles a user holds."""
    return rel.is_self or grants.org.allows(kind, "read")
