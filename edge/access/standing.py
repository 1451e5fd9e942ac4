"""How a caller stands towards one project, group or role: the rules both the resource
services (edge/tenancy) and the access objects of each kind (edge/access/objects.py) use.

Each standing answers what the caller may do and whether they know the target exists at
all: a target they may not know of is a 404, one they know but may not touch a 403.
"""

from __future__ import annotations

from dataclasses import dataclass

from edge.access.engine import Caller
from edge.access.levels import NO_LEVEL
from edge.kernel.errors import Denied, NotFound
from storage import access as access_store
from storage import roles as role_store
from storage.database import Database
from storage.records import Access, Group, Role


# -- projects ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProjectStanding:
    """What one caller may do to one project."""

    known: bool  # holds some access to it (else it is a 404)
    admin: bool  # org admin or project admin, directly or through a role
    read: bool
    update: bool
    delete: bool
    manage: bool  # admin, or org-level project update: suspend, change settings of my-project


def project_standing(caller: Caller, project_id: str) -> ProjectStanding:
    """In project scope, access to other projects counts only through org-level rights."""
    org = caller.org
    scoped = caller.principal.project_id in (None, project_id)
    level = caller.project(project_id) if scoped else NO_LEVEL
    admin = org.is_admin or level.is_admin
    read = admin or org.allows("project", "read") or level.can_read
    update = admin or org.allows("project", "update") or level.can_update
    delete = admin or org.allows("project", "delete")
    known = read or update or delete or (scoped and level.held)
    manage = admin or org.allows("project", "update")
    return ProjectStanding(known, admin, read, update, delete, manage)


# -- groups --------------------------------------------------------------------------------
class GroupStanding:
    """One caller towards one group."""

    def __init__(self, caller: Caller, group: Group) -> None:
        self.caller = caller
        self.group = group

    @property
    def admin(self) -> bool:
        """A group admin, counting admins of the group's project who hold no access to it."""
        return self.caller.is_group_admin(self.group.id, self.group.project_id)

    def may(self, action: str) -> bool:
        caller, group = self.caller, self.group
        if caller.may("group", action, project_id=group.project_id) or self.admin:
            return True
        level = caller.group(group.id) if group.is_active else NO_LEVEL
        return (action == "read" and level.can_read) or (action == "update" and level.can_update)

    def sees(self) -> bool:
        """Whether the caller knows the group exists (else it is a 404, not a 403)."""
        held = self.group.is_active and self.caller.group(self.group.id).held
        return held or any(self.may(a) for a in ("read", "update", "delete"))

    def require(self, action: str) -> None:
        if self.may(action):
            return
        if self.sees():
            raise Denied(f"Not permitted to {action} this group")
        raise NotFound("Group not found")

    def require_admin(self) -> None:
        if self.admin:
            return
        if self.sees():
            raise Denied("Only admins of this group may manage its access")
        raise NotFound("Group not found")


# -- roles ---------------------------------------------------------------------------------
class RoleStanding:
    """One caller towards one role: the caller's grants, what the role itself holds (its
    powers: only asked, never loaded), and the caller's own access to the role."""

    def __init__(self, db: Database, caller: Caller, role: Role, powers: Caller) -> None:
        self._db = db
        self.caller = caller
        self.role = role
        self.powers = powers
        own = db.read(lambda c: access_store.get(c, role.id, caller.principal.account_id))
        self.own: Access | None = own if own is not None and own.is_active else None

    def may(self, action: str) -> bool:
        caller, role = self.caller, self.role
        if caller.may("role", action, project_id=role.project_id):
            return True
        if action in ("read", "update") and self.own is not None:
            if getattr(self.own, f"can_{action}"):
                return True
        grantees = caller.grantees
        via_group = self._db.read(
            lambda c: role_store.group_readable_through(c, role.id, grantees, action)
        )
        return via_group and (action == "read" or not self.powers.is_admin_anywhere())

    def outranks(self) -> bool:
        """Only org admins act on org-admin roles, only a project's admins on its admin roles."""
        if self.caller.is_org_admin:
            return True
        if self.powers.is_org_admin:
            return False
        return all(self.caller.is_project_admin(p) for p in self.powers.admin_projects())

    def is_admin(self) -> bool:
        return self.caller.is_project_admin(self.role.project_id)

    def sees(self) -> bool:
        return self.own is not None or any(self.may(a) for a in ("read", "update", "delete"))

    def require(self, action: str) -> None:
        if self.may(action):
            return
        if self.sees():
            raise Denied(f"Not permitted to {action} this role")
        raise NotFound("Role not found")

    def require_outranking(self, action: str) -> None:
        self.require(action)
        if not self.outranks():
            raise Denied(f"Not permitted to {action} a role with more powers than your own")

    def manages_access(self) -> bool:
        """Org admins; a project-level role's project admins while the role stays in reach."""
        caller, project_id = self.caller, self.role.project_id
        if caller.is_org_admin:
            return True
        if not project_id or not caller.is_project_admin(project_id):
            return False
        if self.powers.org.holds_anything():
            return False
        grantees = caller.grantees
        return not self._db.read(lambda c: role_store.holds_beyond(c, self.role.id, grantees))

    def require_manager(self) -> None:
        if self.manages_access():
            return
        if self.sees():
            raise Denied("Only admins of this role may manage who holds it")
        raise NotFound("Role not found")
