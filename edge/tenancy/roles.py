"""Roles, and the access a role holds.

Who may do what (see docs/permissions.md and docs/groups-and-roles.md; the rules are in
edge/access/standing.py):

- read, update, delete a role: an org- or project-level `role_permissions` block (org and
  project admins hold every block); a group-level block or a group admin for roles with
  access to that group (only reading, for roles that make their holders admins); a holder
  whose role access has `can_read` / `can_update`.
  Update and delete also need the caller to outrank the role: only org admins touch a
  role that makes its holders org admins, only admins of a project one that makes them
  admins of that project.
- `org_permissions` (the role's org access): org admins only; `project_permissions` (its
  project access): admins of the role's project; `restricted_custom_attributes` and
  `force`: org admins and admins of the role's project.
- turning off admin on a role's org or project access, deactivating or deleting an admin
  role logs out every holder. Who holds a role (role access) lives in edge/access.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from edge.access import values as access_values
from edge.access.engine import Caller, Permissions
from edge.access.kinds import Revoker, RoleAccessKind, check_room
from edge.access.levels import BLOCKS, BLOCKS_BY_KIND
from edge.access.standing import RoleStanding
from edge.kernel import audit, clock, fields, ids
from edge.kernel.errors import Denied, NotFound, ValidationError
from edge.kernel.listing import CursorCodec, ListQuery, Page, fetch
from edge.kernel.principal import Principal
from edge.tenancy import settings
from edge.tenancy.groups import TEXT_RULES
from edge.tenancy.settings import check_project, require_org
from edge.tenancy.trash import Trash
from storage import access as access_store
from storage import account_access as held_store
from storage import roles as store
from storage import visibility
from storage.database import Database
from storage.records import Access, AuditEvent, Role
from storage.rows import Tx

TABLE = store.LIST
HELD_TABLES = {"group": held_store.GROUPS, "project": held_store.PROJECTS}
Row = dict[str, Any]
Rows = list[Row]
LEVEL_FIELDS = {"org_permissions": "org", "project_permissions": "project"}


class Roles:
    def __init__(
        self,
        db: Database,
        cursors: CursorCodec,
        permissions: Permissions,
        tokens: Revoker,
        access_kind: RoleAccessKind,
        trash: Trash,
    ) -> None:
        self._db = db
        self.cursors = cursors
        self._permissions = permissions
        self._tokens = tokens
        self._kind = access_kind
        self._trash = trash

    # -- roles -------------------------------------------------------------------------
    def get(self, principal: Principal, role_id: str) -> Row:
        standing = self._open(principal, role_id)
        standing.require("read")
        levels = self._db.read(lambda c: store.levels_of(c, [role_id]))
        out = present(
            standing.role, levels, admin=standing.is_admin(), project_scope=principal.project_id
        )
        out["project_ids"] = self._db.read(lambda c: store.target_ids(c, role_id, "project"))
        out["group_ids"] = self._db.read(lambda c: store.target_ids(c, role_id, "group"))
        return out

    async def list(
        self, principal: Principal, query: ListQuery, group_id: str | None, group_admin: bool | None
    ) -> Page:
        org_id = require_org(principal)
        caller = self._permissions.caller(principal)
        if group_admin is not None and group_id is None:
            raise ValidationError("is_group_admin", "needs group_id")
        scope = store.in_org(org_id, principal.project_id)
        if not caller.sees_all("role"):
            scope &= visibility.roles(principal.account_id, caller.grantees)
        if group_id:
            scope &= store.with_group_access(group_id, group_admin)
        page = await fetch(self._db, TABLE, query, *scope)
        page.rows = self._present_page(caller, principal, page.rows, group_id)
        return page

    async def create(self, principal: Principal, body: dict[str, Any]) -> str:
        org_id = require_org(principal)
        caller = self._permissions.caller(principal)
        given = body["project_id"] if "project_id" in body else principal.project_id
        project_id = check_project(self._db, org_id, given)
        if not caller.may("role", "create", project_id=project_id):
            raise Denied("Not permitted to create roles here")
        _check_admin_fields(caller, body, project_id)
        role = self._new_role(principal, org_id, project_id, _values(body))
        extra = [
            self._level_access(kind, role, body[name], principal.actor)
            for name, kind in LEVEL_FIELDS.items()
            if name in body
        ]
        own = None
        if body.get("create_own_access", False) and not principal.is_staff:
            own = _own_access(principal, role)

        def write(conn: Tx) -> None:
            store.create(conn, role)
            for access in extra:
                access_store.create(conn, access)
            if own is not None:
                check_room(conn, settings.role_limit(conn, org_id), principal.account_id)
                access_store.create(conn, own)

        created = _event("role_created", principal, org_id, role.id, body)
        await self._db.write(audit.along(write, created))
        return role.id

    async def patch(self, principal: Principal, role_id: str, body: dict[str, Any]) -> None:
        standing = self._open(principal, role_id)
        standing.require_outranking("update")
        role, caller = standing.role, standing.caller
        if "is_active" in body and not caller.may("role", "update", project_id=role.project_id):
            raise Denied("Only org or project admins may suspend or reactivate a role")
        _check_admin_fields(caller, body, role.project_id)
        values = _values(body)
        if "name" in values:
            values["name_folded"] = values["name"].casefold()
        values.update(last_updated_date=clock.now_iso(), last_updated_by=principal.actor)
        before = self._db.read(lambda c: store.levels_of(c, [role_id]))
        levels = [
            self._level_change(kind, role, body[name], principal.actor)
            for name, kind in LEVEL_FIELDS.items()
            if name in body
        ]

        def write(conn: Tx) -> None:
            if not store.patch(conn, role_id, values):
                raise NotFound("Role not found")
            for access_id, new, changes in levels:
                if new is not None:
                    access_store.create(conn, new)
                else:
                    access_store.patch(conn, access_id, changes)

        updated = _event("role_updated", principal, role.org_id, role_id, body)
        await self._db.write(audit.along(write, updated))
        if _loses_admin(role, before, body):
            await self._log_out_holders(role_id)

    async def delete(
        self, principal: Principal, role_id: str, *, force: bool, permanent: bool
    ) -> None:
        standing = self._open(principal, role_id)
        standing.require_outranking("delete")
        role = standing.role
        admin = standing.caller.is_project_admin(role.project_id)
        admin_role = _is_admin_role(self._db.read(lambda c: store.levels_of(c, [role_id])))
        holders = self._db.read(lambda c: access_store.holders_of_role(c, role_id))
        await self._trash.delete(
            principal, "role", role, force=force, may_force=admin, permanent=permanent
        )
        if admin_role:
            await self._tokens.revoke_accounts(holders)

    # -- what a role holds ---------------------------------------------------------------
    def org_access(self, principal: Principal, role_id: str) -> Row:
        standing = self._open(principal, role_id)
        standing.require("read")
        org_id = standing.role.org_id
        found = self._db.read(lambda c: access_store.get(c, org_id, role_id))
        if found is None:
            raise NotFound("This role holds no organization access")
        return access_values.present(found, admin=False)

    async def held_access(
        self, principal: Principal, role_id: str, kind: str, query: ListQuery
    ) -> Page:
        """The group or project access a role holds, with each target's name and tags.
        Plain read permission on a role is enough."""
        self._open(principal, role_id).require("read")
        org_id = require_org(principal)
        scope = held_store.held_by(org_id, kind, [role_id])
        page = await fetch(self._db, HELD_TABLES[kind], query, *scope)
        wanted = [access.target_id for access in page.rows]
        targets = self._db.read(lambda c: held_store.targets(c, kind, wanted))
        page.rows = [
            access_values.present_with_target(a, targets.get(a.target_id)) for a in page.rows
        ]
        return page

    # -- helpers -----------------------------------------------------------------------
    def _open(self, principal: Principal, role_id: str) -> RoleStanding:
        require_org(principal)
        return self._kind.standing(self._permissions.caller(principal), role_id)

    def _new_role(
        self, principal: Principal, org_id: str, project_id: str | None, values: Row
    ) -> Role:
        protected = settings.effective(
            self._db, org_id, project_id, "role_delete_protection_on_by_default"
        )
        now = clock.now_iso()
        return Role(
            id=ids.new_id(),
            org_id=org_id,
            project_id=project_id,
            name=values["name"],
            name_folded=values["name"].casefold(),
            description=values.get("description", ""),
            tags=values.get("tags", []),
            is_active=True,
            is_delete_protected=values.get("is_delete_protected", bool(protected)),
            custom_attributes=values.get("custom_attributes", {}),
            restricted_custom_attributes=values.get("restricted_custom_attributes", {}),
            created_date=now,
            created_by=principal.actor,
            last_updated_date=now,
            last_updated_by=principal.actor,
        )

    def _level_access(self, kind: str, role: Role, body: Any, actor: str) -> Access:
        """The role's org access (org_permissions) or project access (project_permissions)."""
        target = role.org_id if kind == "org" else role.project_id
        values = access_values.values_of(kind, fields.mapping(f"{kind}_permissions", body))
        return access_values.new_access(
            kind, target or "", role.id, "role", role.org_id, actor, values
        )

    def _level_change(
        self, kind: str, role: Role, body: Any, actor: str
    ) -> tuple[str, Access | None, Row]:
        """Replace a role's org or project permissions: a new access object, or the changes."""
        new = self._level_access(kind, role, body, actor)
        current = self._db.read(lambda c: access_store.get(c, new.target_id, role.id))
        if current is None:
            return new.id, new, {}
        values = access_values.values_of(kind, {**_all_false(kind), **body})
        return current.id, None, access_values.changes_of(kind, current, values, actor)

    async def _log_out_holders(self, role_id: str) -> None:
        holders = self._db.read(lambda c: access_store.holders_of_role(c, role_id))
        await self._tokens.revoke_accounts(holders)

    def _present_page(
        self, caller: Caller, principal: Principal, roles: Sequence[Role], group_id: str | None
    ) -> Rows:
        role_ids = [role.id for role in roles]
        levels = self._db.read(lambda c: store.levels_of(c, role_ids))
        in_group: dict[str, bool] = {}
        if group_id:
            found = self._db.read(lambda c: store.group_access_of(c, role_ids, group_id))
            in_group = {access.grantee_id: access.is_admin for access in found}
        out = []
        for role in roles:
            mine = [level for level in levels if level.grantee_id == role.id]
            admin = caller.is_project_admin(role.project_id)
            item = present(role, mine, admin=admin, project_scope=principal.project_id)
            if group_id:
                item["is_group_admin"] = in_group.get(role.id, False)
            out.append(item)
        return out


def _check_admin_fields(caller: Caller, body: dict[str, Any], project_id: str | None) -> None:
    if "org_permissions" in body and not caller.is_org_admin:
        raise Denied("Only org admins may set a role's org_permissions")
    if "project_permissions" in body:
        if project_id is None:
            raise ValidationError("project_permissions", "needs a role with a project_id")
        if not caller.is_project_admin(project_id):
            raise Denied("Only admins of the role's project may set its project_permissions")
    if "restricted_custom_attributes" in body and not caller.is_project_admin(project_id):
        raise Denied("Only admins may set restricted_custom_attributes")


def _values(body: dict[str, Any]) -> Row:
    out: Row = {name: rule(name, body[name]) for name, rule in TEXT_RULES.items() if name in body}
    if "tags" in body:
        out["tags"] = fields.tags("tags", body["tags"])
    for name in ("is_active", "is_delete_protected"):
        if name in body:
            out[name] = fields.boolean(name, body[name])
    for name in ("custom_attributes", "restricted_custom_attributes"):
        if name in body:
            out[name] = fields.mapping(name, body[name])
    return out


def _own_access(principal: Principal, role: Role) -> Access:
    """The creator holds a new role with full access to it (create_own_access)."""
    values = {**access_values.full_values("role"), "is_admin": False}
    return access_values.new_access(
        "role", role.id, principal.account_id, principal.kind, role.org_id, principal.actor, values
    )


def _all_false(kind: str) -> dict[str, Any]:
    flags = {"is_admin": False, "can_read": False, "can_update": False}
    blocks: dict[str, Any] = {BLOCKS[r]: {} for r in BLOCKS_BY_KIND[kind]}
    return {**flags, **blocks}


def _is_admin_role(levels: Iterable[Access]) -> bool:
    return any(access.is_admin for access in levels)


def _loses_admin(role: Role, before: list[Access], body: dict[str, Any]) -> bool:
    """Admin turned off on the role's org or project access, or an admin role suspended."""
    if body.get("is_active") is False and role.is_active and _is_admin_role(before):
        return True
    for name, kind in LEVEL_FIELDS.items():
        target = role.org_id if kind == "org" else role.project_id
        was = any(a.is_admin and a.target_id == target for a in before)
        if name in body and was and not body[name].get("is_admin", False):
            return True
    return False


def present(role: Role, levels: list[Access], *, admin: bool, project_scope: str | None) -> Row:
    """A role as the interface's RoleSchema; admins also see `is_active` (AdminRoleSchema)."""
    by_target = {level.target_id: level for level in levels}
    org_level = by_target.get(role.org_id)
    out: Row = {
        "id": role.id,
        "name": role.name,
        "description": role.description,
        "tags": role.tags,
        "is_delete_protected": role.is_delete_protected,
        "is_org_admin": bool(org_level and org_level.is_admin),
        "custom_attributes": role.custom_attributes,
        "restricted_custom_attributes": role.restricted_custom_attributes,
        "org_permissions": access_values.level_permissions(org_level, "org"),
        "created_date": role.created_date,
        "last_updated_date": role.last_updated_date,
    }
    for name in ("created_by", "last_updated_by", "project_id"):
        if getattr(role, name) is not None:
            out[name] = getattr(role, name)
    if role.project_id is not None:
        out["project_permissions"] = access_values.level_permissions(
            by_target.get(role.project_id), "project"
        )
    scope = project_scope or role.project_id
    if scope:
        level = by_target.get(scope)
        out["is_project_admin"] = bool(level and level.is_admin)
    if admin:
        out["is_active"] = role.is_active
    return out


def _event(
    action: str, principal: Principal, org_id: str, role_id: str, body: dict[str, Any]
) -> AuditEvent:
    """The names of the fields sent (permission blocks among them), not their values."""
    details = {"fields": sorted(body)}
    return audit.event(action, principal, org_id=org_id, target=("role", role_id), details=details)
