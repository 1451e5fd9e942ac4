"""What differs between the access objects of groups, projects and roles.

- Group access: managed by the group's admins (and admins of its project); grantees are
  users, devices and roles of the org or of the group's project; group admins never act
  on org or project admins, project admins never on org admins; data and file paths
  follow the legacy setting.
- Project access: managed by the project's admins; read by its readers; losing project
  admin status ends the sessions of whoever lost it.
- Role access (who holds a role): managed by org admins, and by admins of a project-level
  role's project while everything the role holds stays in their reach; grantees are users
  and devices, never roles, up to the org's `max_roles_per_user`; taking away or turning
  off an admin role ends that holder's sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from edge.access import values as rules
from edge.access.engine import Caller, Permissions
from edge.access.objects import Target
from edge.access.standing import GroupStanding, RoleStanding, project_standing
from edge.kernel.errors import Denied, NotFound, ValidationError
from storage import access as store
from storage import accounts
from storage import groups as group_store
from storage import projects as project_store
from storage import roles as role_store
from storage.database import Database
from storage.records import Access
from storage.rows import Tx

# (org_id, project_id, name) -> the effective value of an org or project setting
Setting = Callable[[str, str | None, str], Any]
# (conn, org_id) -> the org's max_roles_per_user, read inside a write
RoleLimit = Callable[[Tx, str], int]


class Revoker(Protocol):
    async def revoke_accounts(self, account_ids: list[str]) -> None: ...


def _grantee(db: Database, target: Target, grantee_id: str, missing: str) -> str:
    kind = db.read(lambda c: accounts.kind_of(c, target.org_id, grantee_id))
    if kind is None:
        raise NotFound(missing)
    return kind


def _check_home(db: Database, field: str, kind: str, account_id: str, project_id: Any) -> None:
    _, home = db.read(lambda c: project_store.account_project(c, account_id))
    require_home(field, kind, home, project_id)


def require_home(field: str, kind: str, home: str | None, project_id: Any) -> None:
    """The home-project rule, once: an account (or role) of one project gets access only to
    that project's targets, or the org's (project_id None). Also edge/accounts/service.py's,
    for the project access a patch of the account sets."""
    if project_id is not None and home is not None and home != project_id:
        raise ValidationError(field, f"this {kind} belongs to another project")


class _Defaults:
    """What most kinds share: no rank rule, nothing to check in the write, nothing after;
    the grantee or one of the caller's roles counts as the caller's own access."""

    def check_rank(self, caller: Caller, target: Target, grantee_id: str) -> None:
        return None

    def own(self, caller: Caller, grantee_id: str) -> bool:
        return grantee_id == caller.principal.account_id or grantee_id in caller.roles

    def check_write(self, conn: Tx, target: Target, grantee_id: str) -> None:
        return None

    async def after(self, target: Target, before: Access, after: Access | None) -> None:
        return None


class GroupAccessKind(_Defaults):
    name = "group"
    missing = "Access not found"
    unknown_grantee = (
        "Grantee not found: no user, device or role you can see in this organization has that ID"
    )

    def __init__(self, db: Database, permissions: Permissions, setting: Setting) -> None:
        self._db = db
        self._permissions = permissions
        self._setting = setting

    def open(self, caller: Caller, target_id: str) -> Target:
        group = self._db.read(lambda c: group_store.get(c, target_id))
        if group is None or group.org_id != caller.principal.org_id:
            raise NotFound("Group not found")
        standing = GroupStanding(caller, group)

        def refuse(action: str) -> None:
            if action == "manage":
                standing.require_admin()
            standing.require(action)

        return Target(
            group.id, group.org_id, group.project_id, standing.may("read"), standing.admin, refuse
        )

    def grantee_kind(self, target: Target, grantee_id: str) -> str:
        kind = _grantee(self._db, target, grantee_id, self.unknown_grantee)
        _check_home(self._db, "grantee_id", kind, grantee_id, target.project_id)
        return kind

    def check_rank(self, caller: Caller, target: Target, grantee_id: str) -> None:
        """Group admins never act on org or project admins; project admins never on org admins."""
        if caller.is_org_admin:
            return
        grantee = self._permissions.grantee(target.org_id, grantee_id)
        if grantee.is_org_admin:
            raise Denied("Only org admins may change the access of an org admin")
        if caller.is_project_admin(target.project_id):
            return
        if grantee.is_admin_anywhere():
            raise Denied("Group admins may not change the access of org or project admins")

    def values(self, target: Target, body: Mapping[str, Any]) -> dict[str, Any]:
        legacy = self._setting(
            target.org_id, target.project_id, "use_legacy_data_and_files_permissions"
        )
        return rules.values_of("group", body, legacy=bool(legacy))


class ProjectAccessKind(_Defaults):
    name = "project"
    missing = "Project access not found"
    unknown_grantee = "Grantee not found"

    def __init__(self, db: Database, permissions: Permissions, tokens: Revoker) -> None:
        self._db = db
        self._permissions = permissions
        self._tokens = tokens

    def open(self, caller: Caller, target_id: str) -> Target:
        org_id = caller.principal.org_id or ""
        project = self._db.read(lambda c: project_store.get_in_org(c, org_id, target_id))
        where = project_standing(caller, target_id)
        if project is None or not where.known:
            raise NotFound("Project not found")

        def refuse(action: str) -> None:
            if action == "manage":
                raise Denied("Only admins of this project may manage its access")
            raise Denied("Not permitted to read access to this project")

        extra = {
            "project_name": project.name,
            "project_description": project.description,
            "project_tags": project.tags,
        }
        return Target(project.id, org_id, project.id, where.read, where.admin, refuse, extra)

    def grantee_kind(self, target: Target, grantee_id: str) -> str:
        kind = _grantee(self._db, target, grantee_id, self.unknown_grantee)
        _check_home(self._db, "grantee_id", kind, grantee_id, target.id)
        return kind

    def values(self, target: Target, body: Mapping[str, Any]) -> dict[str, Any]:
        return rules.values_of("project", body)

    async def after(self, target: Target, before: Access, after: Access | None) -> None:
        """End the sessions of accounts that were project admins through this access only."""
        if not _grants_admin(before) or (after is not None and _grants_admin(after)):
            return
        if before.grantee_kind == "role":
            role_id = before.grantee_id
            holders = self._db.read(lambda c: store.holders_of_role(c, role_id))
        else:
            holders = [before.grantee_id]
        lost = [
            account
            for account in holders
            if not self._permissions.grantee(target.org_id, account).is_project_admin(target.id)
        ]
        await self._tokens.revoke_accounts(lost)


class RoleAccessKind(_Defaults):
    name = "role"
    missing = "Access not found"
    unknown_grantee = (
        "Account not found: no user or device you can see in this organization has that ID"
    )

    def __init__(
        self, db: Database, permissions: Permissions, tokens: Revoker, limit: RoleLimit
    ) -> None:
        self._db = db
        self._permissions = permissions
        self._tokens = tokens
        self._limit = limit

    def standing(self, caller: Caller, role_id: str) -> RoleStanding:
        role = self._db.read(lambda c: role_store.get(c, role_id))
        if role is None or role.org_id != caller.principal.org_id:
            raise NotFound("Role not found")
        return RoleStanding(self._db, caller, role, self._permissions.grantee(role.org_id, role.id))

    def sees(self, caller: Caller, role_id: str) -> bool:
        """Whether the caller knows the role exists (its GET is not a 404)."""
        try:
            return self.standing(caller, role_id).sees()
        except NotFound:
            return False

    def open(self, caller: Caller, target_id: str) -> Target:
        standing = self.standing(caller, target_id)
        role = standing.role

        def refuse(action: str) -> None:
            if action == "manage":
                standing.require_manager()
            standing.require(action)

        manages = standing.manages_access()
        return Target(role.id, role.org_id, role.project_id, standing.may("read"), manages, refuse)

    def grantee_kind(self, target: Target, grantee_id: str) -> str:
        kind = self._db.read(lambda c: accounts.kind_of(c, target.org_id, grantee_id))
        if kind is None:
            raise NotFound(self.unknown_grantee)
        if kind == "role":
            raise ValidationError("account_id", "roles cannot be granted to other roles")
        _check_home(self._db, "account_id", kind, grantee_id, target.project_id)
        return kind

    def values(self, target: Target, body: Mapping[str, Any]) -> dict[str, Any]:
        return rules.values_of("role", body)

    def own(self, caller: Caller, grantee_id: str) -> bool:
        return grantee_id == caller.principal.account_id

    def check_write(self, conn: Tx, target: Target, grantee_id: str) -> None:
        check_room(conn, self._limit(conn, target.org_id), grantee_id)

    async def after(self, target: Target, before: Access, after: Access | None) -> None:
        """Taking an admin role from an account, or turning it off, ends its sessions."""
        turned_off = after is not None and before.is_active and not after.is_active
        if after is not None and not turned_off:
            return
        role_id = target.id
        if any(
            level.is_admin for level in self._db.read(lambda c: role_store.levels_of(c, [role_id]))
        ):
            await self._tokens.revoke_accounts([before.grantee_id])


def check_room(conn: Tx, limit: int, account_id: str) -> None:
    """Refuse a role beyond the org's `max_roles_per_user` (counted in the transaction)."""
    if store.count_roles_held(conn, account_id) >= limit:
        raise ValidationError(
            "account_id", f"already holds the most roles allowed in this organization ({limit})"
        )


def _grants_admin(access: Access) -> bool:
    return access.is_admin and access.is_active
