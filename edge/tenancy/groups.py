"""Groups: collections of users, devices and roles, each with its own data and files.

Who may do what (see docs/permissions.md and docs/groups-and-roles.md; the rules are in
edge/access/standing.py):

- read, update, delete a group: an org- or project-level `group_permissions` block (org
  and project admins hold every block), a group admin, or the group access's own
  `can_read` / `can_update`;
- create: `group_permissions.can_create` at org level, or in the group's project;
- suspend (`is_active`): org- or project-level `group_permissions.can_update`;
  `require_delete_permission_to_put_data` and `force`: org admins and admins of the
  group's project.
Access to a group lives in edge/access (one flow for every kind of access).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from edge.access import values as access_values
from edge.access.engine import Permissions
from edge.access.standing import GroupStanding
from edge.kernel import audit, clock, fields, ids
from edge.kernel.errors import Denied, NotFound
from edge.kernel.listing import CursorCodec, ListQuery, Page, fetch
from edge.kernel.principal import Principal
from edge.tenancy import settings
from edge.tenancy.settings import check_project, require_org
from edge.tenancy.trash import Trash
from storage import access as access_store
from storage import groups as store
from storage import visibility
from storage.database import Database
from storage.records import Access, Group
from storage.rows import Tx

TABLE = store.LIST
Row = dict[str, Any]
DEFAULT_NUM_HISTORY = 10
RDP = "require_delete_permission_to_put_data"
PROTECT = "group_delete_protection_on_by_default"
RDP_DEFAULT = "groups_require_delete_permission_to_put_data_by_default"
LEGACY = "use_legacy_data_and_files_permissions"
DEFAULTS = (PROTECT, RDP_DEFAULT, LEGACY)  # the settings a new group reads, in one go


TEXT_RULES: dict[str, Callable[[str, Any], str]] = {
    "name": fields.identifier,
    "description": fields.description,
}
FLAGS = ("is_active", "is_delete_protected", RDP)


class Groups:
    def __init__(
        self, db: Database, cursors: CursorCodec, permissions: Permissions, trash: Trash
    ) -> None:
        self._db = db
        self.cursors = cursors
        self._permissions = permissions
        self._trash = trash

    def get(self, principal: Principal, group_id: str) -> Row:
        standing = self._open(principal, group_id)
        standing.require("read")
        return present(standing.group)

    async def list(self, principal: Principal, query: ListQuery) -> Page:
        org_id = require_org(principal)
        caller = self._permissions.caller(principal)
        scope = store.in_org(org_id, principal.project_id)
        if not caller.sees_all("group"):
            scope &= visibility.groups(caller.grantees)
        page = await fetch(self._db, TABLE, query, *scope)
        page.rows = [present(group) for group in page.rows]
        return page

    async def create(self, principal: Principal, body: dict[str, Any]) -> str:
        org_id = require_org(principal)
        caller = self._permissions.caller(principal)
        given = body["project_id"] if "project_id" in body else principal.project_id
        project_id = check_project(self._db, org_id, given)
        if not caller.may("group", "create", project_id=project_id):
            raise Denied("Not permitted to create groups here")
        values = _values(body)
        if RDP in values and not caller.is_project_admin(project_id):
            raise Denied(f"Only admins may set {RDP}")
        defaults = settings.effective_many(self._db, org_id, project_id, DEFAULTS)
        group = self._new_group(principal, org_id, project_id, values, defaults)
        own = None
        if body.get("create_own_access", True) and not principal.is_staff:
            own = _own_access(principal, group, legacy=bool(defaults[LEGACY]))

        def write(conn: Tx) -> None:
            store.create(conn, group)
            if own is not None:
                access_store.create(conn, own)

        details = {"name": group.name, "own_access": own is not None}
        if project_id is not None:
            details["project_id"] = project_id
        made = audit.event(
            "group_created", principal, org_id=org_id, target=("group", group.id), details=details
        )
        await self._db.write(audit.along(write, made))
        return group.id

    async def patch(self, principal: Principal, group_id: str, body: dict[str, Any]) -> None:
        standing = self._open(principal, group_id)
        standing.require("update")
        caller, group = standing.caller, standing.group
        values = _values(body)
        if "is_active" in values and not caller.may("group", "update", project_id=group.project_id):
            raise Denied("Only org or project admins may suspend or reactivate a group")
        if RDP in values and not caller.is_project_admin(group.project_id):
            raise Denied(f"Only admins may set {RDP}")
        if "name" in values:
            values["name_folded"] = values["name"].casefold()
        values.update(last_updated_date=clock.now_iso(), last_updated_by=principal.actor)

        def write(conn: Tx) -> None:
            if not store.patch(conn, group_id, values):
                raise NotFound("Group not found")

        await self._db.write(write)

    async def delete(
        self, principal: Principal, group_id: str, *, force: bool, permanent: bool
    ) -> None:
        standing = self._open(principal, group_id)
        standing.require("delete")
        group = standing.group
        admin = standing.caller.is_project_admin(group.project_id)
        await self._trash.delete(
            principal, "group", group, force=force, may_force=admin, permanent=permanent
        )

    def _open(self, principal: Principal, group_id: str) -> GroupStanding:
        org_id = require_org(principal)
        group = self._db.read(lambda c: store.get(c, group_id))
        if group is None or group.org_id != org_id:
            raise NotFound("Group not found")
        return GroupStanding(self._permissions.caller(principal), group)

    def _new_group(
        self,
        principal: Principal,
        org_id: str,
        project_id: str | None,
        values: Row,
        defaults: Row,
    ) -> Group:
        now = clock.now_iso()
        protect = bool(defaults[PROTECT])
        rdp = bool(defaults[RDP_DEFAULT])
        return Group(
            id=ids.new_id(),
            org_id=org_id,
            project_id=project_id,
            name=values["name"],
            name_folded=values["name"].casefold(),
            description=values.get("description", ""),
            tags=values.get("tags", []),
            is_active=True,
            is_delete_protected=values.get("is_delete_protected", protect),
            require_delete_permission_to_put_data=values.get(RDP, rdp),
            role_delete_protection_on_by_default=False,
            num_history=DEFAULT_NUM_HISTORY,
            created_date=now,
            created_by=principal.actor,
            last_updated_date=now,
            last_updated_by=principal.actor,
        )


def _own_access(principal: Principal, group: Group, *, legacy: bool) -> Access:
    """Full access to a new group for its creator (create_own_access)."""
    paths = access_values.full_paths(legacy)
    values = {**access_values.full_values("group"), "data_paths": paths, "file_paths": paths}
    return access_values.new_access(
        "group",
        group.id,
        principal.account_id,
        principal.kind,
        group.org_id,
        principal.actor,
        values,
    )


def _values(body: dict[str, Any]) -> Row:
    out: Row = {name: rule(name, body[name]) for name, rule in TEXT_RULES.items() if name in body}
    if "tags" in body:
        out["tags"] = fields.tags("tags", body["tags"])
    out.update({name: fields.boolean(name, body[name]) for name in FLAGS if name in body})
    return out


def present(group: Group) -> Row:
    """A group as the interface's GroupSchema (admins see the same fields)."""
    out: Row = {
        "id": group.id,
        "name": group.name,
        "description": group.description,
        "tags": group.tags,
        "is_active": group.is_active,
        "is_delete_protected": group.is_delete_protected,
        RDP: group.require_delete_permission_to_put_data,
        "role_delete_protection_on_by_default": group.role_delete_protection_on_by_default,
        "num_history": group.num_history,
        "created_date": group.created_date,
        "last_updated_date": group.last_updated_date,
        "last_updated_by": group.last_updated_by or group.created_by or "",
    }
    if group.created_by is not None:
        out["created_by"] = group.created_by
    if group.project_id is not None:
        out["project_id"] = group.project_id
    return out
