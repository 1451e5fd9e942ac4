"""Groups and their access objects.

Who may do what (see docs/permissions.md and docs/groups-and-roles.md):

- read, update, delete a group: an org- or project-level `group_permissions` block (org
  and project admins hold every block), a group admin, or the group access's own
  `can_read` / `can_update`;
- create: `group_permissions.can_create` at org level, or in the group's project;
- suspend (`is_active`): org- or project-level `group_permissions.can_update`;
  `require_delete_permission_to_put_data` and `force`: org admins and admins of the
  group's project;
- access to a group: its group admins, who never act on org or project admins (project
  admins of the group's project may act on project admins, never on org admins).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from edge import clock, fields, ids
from edge.access import access_objects, grants, permissions
from edge.access.permissions import BLOCKS, FULL_CRUD, RESOURCES, Grants
from edge.errors import DeleteProtected, Denied, NotFound, ValidationError
from edge.listing import CursorCodec, ListQuery, Page, fetch
from edge.principal import Principal
from edge.tenancy.orgs import SETTINGS as ORG_SETTINGS
from storage import access as access_store
from storage import accounts
from storage import groups as store
from storage import orgs as org_store
from storage import projects as project_store
from storage.database import Database

TABLE = store.LIST
Row = dict[str, Any]
DEFAULT_NUM_HISTORY = 10


def _name(field: str, value: Any) -> str:
    return fields.identifier(field, value)


def _description(field: str, value: Any) -> str:
    return fields.text(field, value, max_length=fields.MAX_DESCRIPTION, required=False)


TEXT_RULES: dict[str, Callable[[str, Any], str]] = {"name": _name, "description": _description}
FLAGS = ("is_active", "is_delete_protected", "require_delete_permission_to_put_data")


def effective_setting(db: Database, org_id: str, project_id: str | None, name: str) -> Any:
    """A setting of the project when it sets one, else of its organization."""
    org = db.read(lambda c: org_store.get(c, org_id))
    value = ORG_SETTINGS[name][0]
    if org is not None:
        value = json.loads(org["settings"]).get(name, value)
    if project_id:
        project = db.read(lambda c: project_store.get_in_org(c, org_id, project_id))
        if project is not None:
            value = json.loads(project["settings"] or "{}").get(name, value)
    return value


def require_org(principal: Principal) -> str:
    if principal.org_id is None:
        raise Denied("Sign in to an organization first (staff: with a scope)")
    return principal.org_id


def check_project(db: Database, org_id: str, project_id: Any) -> str | None:
    """A project ID named in a body: it must be a project of the caller's organization."""
    if project_id is None:
        return None
    if not isinstance(project_id, str) or not project_id.strip():
        raise ValidationError("project_id", "must be a project ID")
    if db.read(lambda c: project_store.get_in_org(c, org_id, project_id.strip())) is None:
        raise ValidationError("project_id", "does not name a project of this organization")
    return project_id.strip()


def _admin(held: Grants, group: Row) -> bool:
    return access_objects.is_group_admin(held, group["id"], group["project_id"])


def _may(held: Grants, action: str, group: Row) -> bool:
    group_id = group["id"]
    if held.may("group", action, project_id=group["project_id"]) or _admin(held, group):
        return True
    level = held.group(group_id)
    return (action == "read" and level.can_read) or (action == "update" and level.can_update)


def _sees(held: Grants, group: Row) -> bool:
    """Whether the caller knows the group exists (else it is a 404, not a 403)."""
    return group["id"] in held.groups or any(
        _may(held, action, group) for action in ("read", "update", "delete")
    )


def _require(held: Grants, action: str, group: Row) -> None:
    if _may(held, action, group):
        return
    if _sees(held, group):
        raise Denied(f"Not permitted to {action} this group")
    raise NotFound("Group not found")


def _require_group_admin(held: Grants, group: Row) -> None:
    if _admin(held, group):
        return
    if _sees(held, group):
        raise Denied("Only admins of this group may manage its access")
    raise NotFound("Group not found")


class Groups:
    def __init__(self, db: Database, cursors: CursorCodec) -> None:
        self._db = db
        self.cursors = cursors

    # -- groups ------------------------------------------------------------------------
    def get(self, principal: Principal, group_id: str) -> Row:
        held, group = self._load(principal, group_id)
        _require(held, "read", group)
        return present(group)

    async def list(self, principal: Principal, query: ListQuery) -> Page:
        org_id = require_org(principal)
        held = permissions.load(self._db, principal)
        projects = [p for p, level in held.projects.items() if level.allows("group", "read")]
        readable = [g for g, lvl in held.groups.items() if lvl.can_read or held.is_group_admin(g)]
        everything = held.org.allows("group", "read")
        scope = store.visible(org_id, principal.project_id, everything, projects, readable)
        page = await fetch(self._db, TABLE, query, *scope)
        page.rows = [present(row) for row in page.rows]
        return page

    async def create(self, principal: Principal, body: dict[str, Any]) -> str:
        org_id = require_org(principal)
        held = permissions.load(self._db, principal)
        project_id = check_project(
            self._db, org_id, body["project_id"] if "project_id" in body else principal.project_id
        )
        if not held.may("group", "create", project_id=project_id):
            raise Denied("Not permitted to create groups here")
        values = _values(body)
        if "require_delete_permission_to_put_data" in values and not held.is_project_admin(
            project_id
        ):
            raise Denied("Only admins may set require_delete_permission_to_put_data")
        row = self._new_row(principal, org_id, project_id, values)
        own = None
        if body.get("create_own_access", True) and not principal.is_staff:
            own = self._own_access(principal, org_id, row)

        def write(conn: Any) -> None:
            store.create(conn, row)
            if own is not None:
                access_store.create(conn, own)

        await self._db.write(write)
        return str(row["id"])

    async def patch(self, principal: Principal, group_id: str, body: dict[str, Any]) -> None:
        held, group = self._load(principal, group_id)
        _require(held, "update", group)
        values = _values(body)
        project_id = group["project_id"]
        if "is_active" in values and not held.may("group", "update", project_id=project_id):
            raise Denied("Only org or project admins may suspend or reactivate a group")
        if "require_delete_permission_to_put_data" in values and not held.is_project_admin(
            project_id
        ):
            raise Denied("Only admins may set require_delete_permission_to_put_data")
        if "tags" in values:
            values["tags"] = json.dumps(values["tags"])
        if "name" in values:
            values["name_folded"] = values["name"].casefold()
        values.update(last_updated_date=clock.now_iso(), last_updated_by=principal.actor)

        def write(conn: Any) -> None:
            if not store.patch(conn, group_id, values):
                raise NotFound("Group not found")

        await self._db.write(write)

    async def delete(self, principal: Principal, group_id: str, *, force: bool) -> None:
        held, group = self._load(principal, group_id)
        _require(held, "delete", group)
        if force and not held.is_project_admin(group["project_id"]):
            raise Denied("Only admins may force a delete")
        if group["is_delete_protected"] and not force:
            raise DeleteProtected("Group")

        def write(conn: Any) -> None:
            if not store.delete(conn, group_id):
                raise NotFound("Group not found")

        await self._db.write(write)

    # -- group access ------------------------------------------------------------------
    def get_access(self, principal: Principal, group_id: str, grantee_id: str) -> Row:
        held, group = self._load(principal, group_id)
        admin = _admin(held, group)
        own = grantee_id == principal.account_id or grantee_id in held.roles
        if not (admin or own or _may(held, "read", group)):
            _require(held, "read", group)
        row = access_objects.find(self._db, group_id, grantee_id)
        return access_objects.present(row, admin=admin)

    async def create_access(
        self, principal: Principal, group_id: str, grantee_id: str, body: dict[str, Any]
    ) -> None:
        held, group = self._load(principal, group_id)
        _require_group_admin(held, group)
        kind = self._db.read(lambda c: accounts.kind_of(c, group["org_id"], grantee_id))
        if kind is None:
            raise NotFound("Grantee not found: no user or role of this organization has that ID")
        access_objects.check_home(self._db, "grantee_id", kind, grantee_id, group["project_id"])
        self._check_rank(held, group, grantee_id)
        values = access_objects.values_of("group", body, legacy=self._legacy(group))
        row = grants.new_row(
            "group", group_id, grantee_id, kind, group["org_id"], principal.actor, values
        )
        await access_objects.create(self._db, row)

    async def patch_access(
        self, principal: Principal, group_id: str, grantee_id: str, body: dict[str, Any]
    ) -> None:
        held, group = self._load(principal, group_id)
        _require_group_admin(held, group)
        row = access_objects.find(self._db, group_id, grantee_id)
        self._check_rank(held, group, grantee_id)
        values = access_objects.values_of("group", body, legacy=self._legacy(group))
        changes = access_objects.column_changes("group", row, values, principal.actor)
        await access_objects.patch(self._db, row["id"], changes)

    async def delete_access(
        self, principal: Principal, group_id: str, grantee_id: str, *, force: bool
    ) -> None:
        held, group = self._load(principal, group_id)
        _require_group_admin(held, group)
        row = access_objects.find(self._db, group_id, grantee_id)
        self._check_rank(held, group, grantee_id)
        if row["is_delete_protected"] and not force:
            raise DeleteProtected("Access")
        await access_objects.delete(self._db, row["id"])

    # -- helpers -----------------------------------------------------------------------
    def _load(self, principal: Principal, group_id: str) -> tuple[Grants, Row]:
        org_id = require_org(principal)
        group = self._db.read(lambda c: store.get(c, group_id))
        if group is None or group["org_id"] != org_id:
            raise NotFound("Group not found")
        return permissions.load(self._db, principal), group

    def _check_rank(self, held: Grants, group: Row, grantee_id: str) -> None:
        """Group admins never act on org or project admins; project admins never on org admins."""
        if held.is_org_admin:
            return
        grantee = access_objects.grantee_grants(self._db, group["org_id"], grantee_id)
        if grantee.is_org_admin:
            raise Denied("Only org admins may change the access of an org admin")
        if held.is_project_admin(group["project_id"]):
            return
        if access_objects.is_admin_anywhere(grantee):
            raise Denied("Group admins may not change the access of org or project admins")

    def _legacy(self, group: Row) -> bool:
        return bool(
            effective_setting(
                self._db,
                group["org_id"],
                group["project_id"],
                "use_legacy_data_and_files_permissions",
            )
        )

    def _new_row(
        self, principal: Principal, org_id: str, project_id: str | None, values: Row
    ) -> Row:
        def default(name: str) -> bool:
            return bool(effective_setting(self._db, org_id, project_id, name))

        now = clock.now_iso()
        rdp = "require_delete_permission_to_put_data"
        return {
            "id": ids.new_id(),
            "org_id": org_id,
            "project_id": project_id,
            "name": values["name"],
            "name_folded": values["name"].casefold(),
            "description": values.get("description", ""),
            "tags": json.dumps(values.get("tags", [])),
            "is_active": True,
            "is_delete_protected": values.get(
                "is_delete_protected", default("group_delete_protection_on_by_default")
            ),
            rdp: values.get(
                rdp, default("groups_require_delete_permission_to_put_data_by_default")
            ),
            "role_delete_protection_on_by_default": False,
            "num_history": DEFAULT_NUM_HISTORY,
            "created_date": now,
            "created_by": principal.actor,
            "last_updated_date": now,
            "last_updated_by": principal.actor,
        }

    def _own_access(self, principal: Principal, org_id: str, group: Row) -> Row:
        """Full access to a new group for its creator (create_own_access)."""
        legacy = self._legacy(group)
        full = {BLOCKS[r]: FULL_CRUD.to_json() for r in RESOURCES}
        paths = access_objects.full_paths(legacy)
        values = {"is_admin": True, "can_read": True, "can_update": True, **full}
        values.update(data_paths=paths, file_paths=paths)
        return grants.new_row(
            "group",
            group["id"],
            principal.account_id,
            principal.kind,
            org_id,
            principal.actor,
            values,
        )


def _values(body: dict[str, Any]) -> Row:
    out: Row = {name: rule(name, body[name]) for name, rule in TEXT_RULES.items() if name in body}
    if "tags" in body:
        out["tags"] = fields.tags("tags", body["tags"])
    out.update({name: fields.boolean(name, body[name]) for name in FLAGS if name in body})
    return out


def present(row: Row) -> Row:
    """A group row as the interface's GroupSchema (admins see the same fields)."""
    out: Row = {
        "id": row["id"],
        "name": row["name"],
        "description": row["description"],
        "tags": json.loads(row["tags"]),
        "is_active": bool(row["is_active"]),
        "is_delete_protected": bool(row["is_delete_protected"]),
        "require_delete_permission_to_put_data": bool(row["require_delete_permission_to_put_data"]),
        "role_delete_protection_on_by_default": bool(row["role_delete_protection_on_by_default"]),
        "num_history": row["num_history"],
        "created_date": row["created_date"],
        "last_updated_date": row["last_updated_date"],
        "last_updated_by": row["last_updated_by"] or row["created_by"] or "",
    }
    if row["created_by"] is not None:
        out["created_by"] = row["created_by"]
    if row["project_id"] is not None:
        out["project_id"] = row["project_id"]
    return out
