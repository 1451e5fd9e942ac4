"""Roles, the accounts that hold them (role access), and the access a role holds.

Who may do what (see docs/permissions.md and docs/groups-and-roles.md):

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
- granting a role (role access): org admins; admins of a project-level role's project
  when everything the role holds lies within their reach.
- turning off admin on a role's org or project access, deactivating or deleting an admin
  role logs out every holder; taking an admin role from one account logs that one out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from edge import clock, fields, ids
from edge.access import access_objects, grants, permissions
from edge.access.permissions import BLOCKS, FULL_CRUD, Grants
from edge.auth.tokens import Tokens
from edge.errors import DeleteProtected, Denied, NotFound, ValidationError
from edge.listing import CursorCodec, ListQuery, Page, fetch
from edge.principal import Principal
from edge.tenancy.groups import TEXT_RULES, check_project, effective_setting, require_org
from edge.tenancy.orgs import SETTINGS as ORG_SETTINGS
from storage import access as access_store
from storage import account_access as held_store
from storage import accounts
from storage import orgs as org_store
from storage import roles as store
from storage.database import Database

TABLE = store.LIST
HELD_TABLES = {"group": held_store.GROUPS, "project": held_store.PROJECTS}
Row = dict[str, Any]
Rows = list[Row]
Ids = list[str]
LEVEL_FIELDS = {"org_permissions": "org", "project_permissions": "project"}


class Roles:
    def __init__(self, db: Database, cursors: CursorCodec, tokens: Tokens) -> None:
        self._db = db
        self.cursors = cursors
        self._tokens = tokens

    # -- roles -------------------------------------------------------------------------
    def get(self, principal: Principal, role_id: str) -> Row:
        ctx = self._load(principal, role_id)
        ctx.require("read")
        levels = self._db.read(lambda c: store.levels_of(c, [role_id]))
        out = present(ctx.role, levels, admin=ctx.is_admin(), project_scope=principal.project_id)
        out["project_ids"] = self._db.read(lambda c: store.target_ids(c, role_id, "project"))
        out["group_ids"] = self._db.read(lambda c: store.target_ids(c, role_id, "group"))
        return out

    async def list(
        self, principal: Principal, query: ListQuery, group_id: str | None, group_admin: bool | None
    ) -> Page:
        org_id = require_org(principal)
        held = permissions.load(self._db, principal)
        reach = store.Reach(
            projects=[p for p, level in held.projects.items() if level.allows("role", "read")],
            groups=[g for g, lvl in held.groups.items() if lvl.allows("role", "read")],
            group_projects=[p for p, level in held.projects.items() if level.is_admin],
            roles=self._db.read(lambda c: store.readable_held(c, principal.account_id)),
        )
        reach.groups.extend(g for g in held.groups if held.is_group_admin(g))
        if group_admin is not None and group_id is None:
            raise ValidationError("is_group_admin", "needs group_id")
        group_filter = (group_id, group_admin) if group_id else None
        everyone = held.org.allows("role", "read")
        scope = store.visible(
            org_id, principal.project_id, None if everyone else reach, group_filter
        )
        page = await fetch(self._db, TABLE, query, *scope)
        page.rows = self._present_page(held, principal, page.rows, group_id)
        return page

    async def create(self, principal: Principal, body: dict[str, Any]) -> str:
        org_id = require_org(principal)
        held = permissions.load(self._db, principal)
        project_id = check_project(
            self._db, org_id, body["project_id"] if "project_id" in body else principal.project_id
        )
        if not held.may("role", "create", project_id=project_id):
            raise Denied("Not permitted to create roles here")
        _check_admin_fields(held, body, project_id)
        values = _values(body)
        row = self._new_row(principal, org_id, project_id, values)
        extra = [
            self._level_row(kind, row, body[name], principal.actor)
            for name, kind in LEVEL_FIELDS.items()
            if name in body
        ]
        own = None
        if body.get("create_own_access", False) and not principal.is_staff:
            own = _own_access(principal, row)

        def write(conn: Any) -> None:
            store.create(conn, row)
            for access in extra:
                access_store.create(conn, access)
            if own is not None:
                self._check_room(conn, org_id, principal.account_id)
                access_store.create(conn, own)

        await self._db.write(write)
        return str(row["id"])

    async def patch(self, principal: Principal, role_id: str, body: dict[str, Any]) -> None:
        ctx = self._load(principal, role_id)
        ctx.require_outranking("update")
        role, held = ctx.role, ctx.held
        if "is_active" in body and not held.may("role", "update", project_id=role["project_id"]):
            raise Denied("Only org or project admins may suspend or reactivate a role")
        _check_admin_fields(held, body, role["project_id"])
        values = _values(body)
        for name in ("tags", "custom_attributes", "restricted_custom_attributes"):
            if name in values:
                values[name] = json.dumps(values[name])
        if "name" in values:
            values["name_folded"] = values["name"].casefold()
        values.update(last_updated_date=clock.now_iso(), last_updated_by=principal.actor)
        before = self._db.read(lambda c: store.levels_of(c, [role_id]))
        levels = [
            self._level_change(kind, role, body[name], principal.actor)
            for name, kind in LEVEL_FIELDS.items()
            if name in body
        ]

        def write(conn: Any) -> None:
            if not store.patch(conn, role_id, values):
                raise NotFound("Role not found")
            for access_id, new, changes in levels:
                if new is not None:
                    access_store.create(conn, new)
                else:
                    access_store.patch(conn, access_id, changes)

        await self._db.write(write)
        if _loses_admin(role, before, body):
            await self._log_out_holders(role_id)

    async def delete(self, principal: Principal, role_id: str, *, force: bool) -> None:
        ctx = self._load(principal, role_id)
        ctx.require_outranking("delete")
        if force and not ctx.held.is_project_admin(ctx.role["project_id"]):
            raise Denied("Only admins may force a delete")
        if ctx.role["is_delete_protected"] and not force:
            raise DeleteProtected("Role")
        admin_role = _is_admin_role(self._db.read(lambda c: store.levels_of(c, [role_id])))
        holders = self._db.read(lambda c: access_store.holders_of_role(c, role_id))

        def write(conn: Any) -> None:
            if not store.delete(conn, role_id):
                raise NotFound("Role not found")

        await self._db.write(write)
        if admin_role:
            await self._tokens.revoke_accounts(holders)

    # -- what a role holds ---------------------------------------------------------------
    def org_access(self, principal: Principal, role_id: str) -> Row:
        ctx = self._load(principal, role_id)
        ctx.require("read")
        row = access_objects.find_optional(self._db, ctx.role["org_id"], role_id)
        if row is None:
            raise NotFound("This role holds no organization access")
        return access_objects.present(row, admin=False)

    def require_read(self, principal: Principal, role_id: str) -> None:
        """Plain read permission on a role is enough to list the access it holds."""
        self._load(principal, role_id).require("read")

    async def held_access(
        self, principal: Principal, role_id: str, kind: str, query: ListQuery
    ) -> Page:
        """The group or project access a role holds, with each target's name and tags."""
        self.require_read(principal, role_id)
        org_id = require_org(principal)
        sql, params = held_store.held_by(org_id, kind, [role_id])
        if query.search:
            found, more = held_store.search(kind, query.search, query.search_fields)
            sql, params = f"{sql} AND {found}", (*params, *more)
            query = replace(query, search=None, search_fields=())
        page = await fetch(self._db, HELD_TABLES[kind], query, sql, params)
        wanted = [str(r["target_id"]) for r in page.rows]
        targets = self._db.read(lambda c: held_store.targets(c, kind, wanted))
        page.rows = [
            access_objects.present_with_target(r, targets.get(r["target_id"])) for r in page.rows
        ]
        return page

    # -- role access (accounts holding a role) -------------------------------------------
    def get_access(self, principal: Principal, role_id: str, account_id: str) -> Row:
        ctx = self._load(principal, role_id)
        manager = ctx.manages_access()
        if not (manager or account_id == principal.account_id or ctx.may("read")):
            ctx.require("read")
        row = access_objects.find(self._db, role_id, account_id)
        return access_objects.present(row, admin=manager)

    async def create_access(
        self, principal: Principal, role_id: str, account_id: str, body: dict[str, Any]
    ) -> None:
        ctx = self._load(principal, role_id)
        ctx.require_manager()
        org_id = ctx.role["org_id"]
        kind = self._db.read(lambda c: accounts.kind_of(c, org_id, account_id))
        if kind is None:
            raise NotFound("Account not found: no user or device of this organization has that ID")
        if kind == "role":
            raise ValidationError("account_id", "roles cannot be granted to other roles")
        access_objects.check_home(self._db, "account_id", kind, account_id, ctx.role["project_id"])
        values = access_objects.values_of("role", body)
        row = grants.new_row("role", role_id, account_id, kind, org_id, principal.actor, values)
        await access_objects.create(
            self._db, row, lambda conn: self._check_room(conn, org_id, account_id)
        )

    async def patch_access(
        self, principal: Principal, role_id: str, account_id: str, body: dict[str, Any]
    ) -> None:
        ctx = self._load(principal, role_id)
        ctx.require_manager()
        row = access_objects.find(self._db, role_id, account_id)
        values = access_objects.values_of("role", body)
        changes = access_objects.column_changes("role", row, values, principal.actor)
        await access_objects.patch(self._db, row["id"], changes)
        if values.get("is_active") is False and row["is_active"]:
            await self._log_out_if_admin_role(role_id, [account_id])

    async def delete_access(
        self, principal: Principal, role_id: str, account_id: str, *, force: bool
    ) -> None:
        ctx = self._load(principal, role_id)
        ctx.require_manager()
        row = access_objects.find(self._db, role_id, account_id)
        if row["is_delete_protected"] and not force:
            raise DeleteProtected("Access")
        await access_objects.delete(self._db, row["id"])
        await self._log_out_if_admin_role(role_id, [account_id])

    # -- helpers -----------------------------------------------------------------------
    def _load(self, principal: Principal, role_id: str) -> RoleContext:
        org_id = require_org(principal)
        role = self._db.read(lambda c: store.get(c, role_id))
        if role is None or role["org_id"] != org_id:
            raise NotFound("Role not found")
        held = permissions.load(self._db, principal)
        own = access_objects.find_optional(self._db, role_id, principal.account_id)
        powers = access_objects.grantee_grants(self._db, org_id, role_id)
        return RoleContext(role, held, powers, own)

    def _check_room(self, conn: Any, org_id: str, account_id: str) -> None:
        """Refuse a role beyond the org's `max_roles_per_user` (counted in the transaction)."""
        org = org_store.get(conn, org_id)
        limit = ORG_SETTINGS["max_roles_per_user"][0]
        if org is not None:
            limit = json.loads(org["settings"]).get("max_roles_per_user", limit)
        if store.count_held(conn, account_id) >= limit:
            raise ValidationError(
                "account_id", f"already holds the most roles allowed in this organization ({limit})"
            )

    def _new_row(
        self, principal: Principal, org_id: str, project_id: str | None, values: Row
    ) -> Row:
        protected = effective_setting(
            self._db, org_id, project_id, "role_delete_protection_on_by_default"
        )
        now = clock.now_iso()
        return {
            "id": ids.new_id(),
            "org_id": org_id,
            "project_id": project_id,
            "name": values["name"],
            "name_folded": values["name"].casefold(),
            "description": values.get("description", ""),
            "tags": json.dumps(values.get("tags", [])),
            "is_active": True,
            "is_delete_protected": values.get("is_delete_protected", bool(protected)),
            "custom_attributes": json.dumps(values.get("custom_attributes", {})),
            "restricted_custom_attributes": json.dumps(
                values.get("restricted_custom_attributes", {})
            ),
            "created_date": now,
            "created_by": principal.actor,
            "last_updated_date": now,
            "last_updated_by": principal.actor,
        }

    def _level_row(self, kind: str, role: Row, body: Any, actor: str) -> Row:
        """The role's org access (org_permissions) or project access (project_permissions)."""
        target = role["org_id"] if kind == "org" else role["project_id"]
        values = access_objects.values_of(kind, fields.mapping(f"{kind}_permissions", body))
        return grants.new_row(kind, target, role["id"], "role", role["org_id"], actor, values)

    def _level_change(
        self, kind: str, role: Row, body: Any, actor: str
    ) -> tuple[str, Row | None, Row]:
        """Replace a role's org or project permissions: a new access row, or the changes."""
        new = self._level_row(kind, role, body, actor)
        current = access_objects.find_optional(self._db, new["target_id"], role["id"])
        if current is None:
            return new["id"], new, {}
        values = access_objects.values_of(kind, {**_all_false(kind), **body})
        return current["id"], None, access_objects.column_changes(kind, current, values, actor)

    async def _log_out_holders(self, role_id: str) -> None:
        holders = self._db.read(lambda c: access_store.holders_of_role(c, role_id))
        await self._tokens.revoke_accounts(holders)

    async def _log_out_if_admin_role(self, role_id: str, accounts_: Ids) -> None:
        if _is_admin_role(self._db.read(lambda c: store.levels_of(c, [role_id]))):
            await self._tokens.revoke_accounts(accounts_)

    def _present_page(
        self, held: Grants, principal: Principal, rows: Rows, group_id: str | None
    ) -> Rows:
        role_ids = [str(r["id"]) for r in rows]
        levels = self._db.read(lambda c: store.levels_of(c, role_ids))
        in_group: dict[str, bool] = {}
        if group_id:
            found = self._db.read(lambda c: store.group_access_of(c, role_ids, group_id))
            in_group = {str(a["grantee_id"]): bool(a["is_admin"]) for a in found}
        out = []
        for row in rows:
            mine = [level for level in levels if level["grantee_id"] == row["id"]]
            item = present(
                row,
                mine,
                admin=held.is_project_admin(row["project_id"]),
                project_scope=principal.project_id,
            )
            if group_id:
                item["is_group_admin"] = in_group.get(str(row["id"]), False)
            out.append(item)
        return out


class RoleContext:
    """One role, the caller's grants, what the role itself holds, and the caller's access to it."""

    def __init__(self, role: Row, held: Grants, powers: Grants, own: Row | None) -> None:
        self.role = role
        self.held = held
        self.powers = powers
        self.own = own if own is not None and own["is_active"] else None

    def may(self, action: str) -> bool:
        role, held = self.role, self.held
        if held.may("role", action, project_id=role["project_id"]):
            return True
        if action in ("read", "update") and self.own is not None and self.own[f"can_{action}"]:
            return True
        via_group = any(
            held.group(g).allows("role", action) or self._group_admin(g) for g in self.powers.groups
        )
        return via_group and (action == "read" or not access_objects.is_admin_anywhere(self.powers))

    def _group_admin(self, group_id: str) -> bool:
        project_id = self.powers.group_projects.get(group_id)
        return access_objects.is_group_admin(self.held, group_id, project_id)

    def outranks(self) -> bool:
        """Only org admins act on org-admin roles, only a project's admins on its admin roles."""
        if self.held.is_org_admin:
            return True
        if self.powers.is_org_admin:
            return False
        admin_of = [p for p, level in self.powers.projects.items() if level.is_admin]
        return all(self.held.is_project_admin(p) for p in admin_of)

    def is_admin(self) -> bool:
        return self.held.is_project_admin(self.role["project_id"])

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
        held, powers, project_id = self.held, self.powers, self.role["project_id"]
        if held.is_org_admin:
            return True
        if (
            not project_id
            or not held.is_project_admin(project_id)
            or access_objects.holds_anything(powers.org)
        ):
            return False
        return all(held.is_project_admin(p) for p in powers.projects) and all(
            self._group_admin(g) for g in powers.groups
        )

    def require_manager(self) -> None:
        if self.manages_access():
            return
        if self.sees():
            raise Denied("Only admins of this role may manage who holds it")
        raise NotFound("Role not found")


def _check_admin_fields(held: Grants, body: dict[str, Any], project_id: str | None) -> None:
    if "org_permissions" in body and not held.is_org_admin:
        raise Denied("Only org admins may set a role's org_permissions")
    if "project_permissions" in body:
        if project_id is None:
            raise ValidationError("project_permissions", "needs a role with a project_id")
        if not held.is_project_admin(project_id):
            raise Denied("Only admins of the role's project may set its project_permissions")
    if "restricted_custom_attributes" in body and not held.is_project_admin(project_id):
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


def _own_access(principal: Principal, role: Row) -> Row:
    """The creator holds a new role with full access to it (create_own_access)."""
    full = FULL_CRUD.to_json()
    values = {"can_read": True, "can_update": True, **{BLOCKS[r]: full for r in ("user", "device")}}
    return grants.new_row(
        "role",
        role["id"],
        principal.account_id,
        principal.kind,
        role["org_id"],
        principal.actor,
        values,
    )


def _all_false(kind: str) -> dict[str, Any]:
    flags = {"is_admin": False, "can_read": False, "can_update": False}
    return {**flags, **{BLOCKS[r]: {} for r in grants.BLOCKS_BY_KIND[kind]}}


def _is_admin_role(levels: Iterable[Row]) -> bool:
    return any(row["is_admin"] for row in levels)


def _loses_admin(role: Row, before: list[Row], body: dict[str, Any]) -> bool:
    """Admin turned off on the role's org or project access, or an admin role suspended."""
    if body.get("is_active") is False and role["is_active"] and _is_admin_role(before):
        return True
    for name, kind in LEVEL_FIELDS.items():
        target = role["org_id"] if kind == "org" else role["project_id"]
        was = any(r["is_admin"] and r["target_id"] == target for r in before)
        if name in body and was and not body[name].get("is_admin", False):
            return True
    return False


def present(row: Row, levels: list[Row], *, admin: bool, project_scope: str | None) -> Row:
    """A role as the interface's RoleSchema; admins also see `is_active` (AdminRoleSchema)."""
    by_target = {str(level["target_id"]): level for level in levels}
    org_level = by_target.get(str(row["org_id"]))
    out: Row = {
        "id": row["id"],
        "name": row["name"],
        "description": row["description"],
        "tags": json.loads(row["tags"]),
        "is_delete_protected": bool(row["is_delete_protected"]),
        "is_org_admin": bool(org_level and org_level["is_admin"]),
        "custom_attributes": json.loads(row["custom_attributes"]),
        "restricted_custom_attributes": json.loads(row["restricted_custom_attributes"]),
        "org_permissions": access_objects.level_permissions(org_level, "org"),
        "created_date": row["created_date"],
        "last_updated_date": row["last_updated_date"],
    }
    for name in ("created_by", "last_updated_by", "project_id"):
        if row[name] is not None:
            out[name] = row[name]
    if row["project_id"] is not None:
        out["project_permissions"] = access_objects.level_permissions(
            by_target.get(row["project_id"]), "project"
        )
    scope = project_scope or row["project_id"]
    if scope:
        level = by_target.get(scope)
        out["is_project_admin"] = bool(level and level["is_admin"])
    if admin:
        out["is_active"] = bool(row["is_active"])
    return out
