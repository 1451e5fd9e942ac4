"""The caller's own account: the access they hold, their session's permissions, and their
dashboard.

Access lists hold the caller's own access objects and those of the active roles they
hold (a role's access counts as their own; `grantee_id` says which holds it). The
current session's permissions are merged through roles, as the permission engine does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from edge.access import values as access_values
from edge.access.engine import Permissions
from edge.access.levels import BLOCKS, BLOCKS_BY_KIND, FULL_CRUD, NO_CRUD, Level
from edge.kernel import clock, fields, ids
from edge.kernel.errors import Denied, ValidationError
from edge.kernel.listing import ListQuery, Page, fetch
from edge.kernel.principal import Principal
from storage import access as access_store
from storage import account_access as store
from storage import dashboards
from storage import users as user_store
from storage.database import Database
from storage.listing import Table
from storage.records import Access

Row = dict[str, Any]
TABLES: dict[str, Table] = {"group": store.GROUPS, "project": store.PROJECTS, "role": store.ROLES}
MAX_WIDGETS = 200
ORDER_RANGE = (-(2**31), 2**31 - 1)  # a widget's order: a signed 32-bit integer


@dataclass(frozen=True)
class AccessOptions:
    ids_only: bool = False
    include_inactive_groups: bool = False
    group_id: str | None = None


class Account:
    def __init__(self, db: Database, permissions: Permissions) -> None:
        self._db = db
        self._permissions = permissions

    # -- access --------------------------------------------------------------------------
    def org_access(self, principal: Principal) -> Row:
        account_id, org_id = _member(principal)
        row = self._db.read(lambda c: access_store.get(c, org_id, account_id))
        if row is None:
            user = self._db.read(lambda c: user_store.get(c, account_id))
            row = _no_access(org_id, account_id, user.created_date if user else clock.now_iso())
        return {"org_access": present_access("org", row)}

    async def access(
        self, principal: Principal, kind: str, query: ListQuery, options: AccessOptions
    ) -> Page:
        account_id, org_id = _member(principal)
        roles = (
            []
            if kind == "role"
            else self._db.read(lambda c: access_store.held_roles(c, account_id))
        )
        scope = store.held_by(org_id, kind, [account_id, *roles])
        if kind == "group" and not options.include_inactive_groups:
            scope &= store.target_active("group")
        if principal.project_id:
            scope &= store.target_in_project(kind, principal.project_id)
        if options.group_id:
            scope &= store.role_holds_group(options.group_id)
        table = TABLES[kind]
        if options.ids_only:  # a target held directly and through a role: its ID once
            table = replace(table, one_per="access.target_id")
        page = await fetch(self._db, table, query, *scope)
        page.rows = self._present_page(principal, kind, page.rows, options.ids_only)
        return page

    def _present_page(
        self, principal: Principal, kind: str, rows: list[Access], ids_only: bool
    ) -> list[Any]:
        if ids_only:
            return [row.target_id for row in rows]
        if kind == "role":
            admin = self._permissions.caller(principal).is_org_admin
            return [present_role_access(row, admin) for row in rows]
        found = self._db.read(lambda c: store.targets(c, kind, [r.target_id for r in rows]))
        return [_described(kind, row, found.get(row.target_id)) for row in rows]

    def current_session(self, principal: Principal) -> Row:
        grants = self._permissions.caller(principal)
        out = {"org_permissions": effective("org", grants.org)}
        if principal.project_id:
            out["project_permissions"] = effective("project", grants.project(principal.project_id))
        return out

    # -- dashboard -----------------------------------------------------------------------
    def dashboard(self, principal: Principal) -> Row:
        user_id = _user(principal)
        stored = self._db.read(lambda c: dashboards.get(c, user_id))
        return stored if stored else {"widgets": []}

    async def set_dashboard(self, principal: Principal, body: Row) -> None:
        user_id = _user(principal)
        config = {"widgets": _widgets(body["widgets"])}
        now = clock.now_iso()
        await self._db.write(lambda c: dashboards.put(c, user_id, config, now))


def _member(principal: Principal) -> tuple[str, str]:
    if principal.is_staff or principal.org_id is None:
        raise Denied(
            "Staff accounts hold no access objects; see /v2/account/access/current-session"
        )
    return principal.account_id, principal.org_id


def _user(principal: Principal) -> str:
    if principal.kind != "user":
        raise Denied("Only user accounts have a dashboard")
    return principal.account_id


def _no_access(org_id: str, account_id: str, created: str) -> Access:
    """The org access of a member who holds none: everything false."""
    return Access(
        id=ids.access_id(org_id, account_id),
        kind="org",
        target_id=org_id,
        grantee_id=account_id,
        grantee_kind="user",
        org_id=org_id,
        is_admin=False,
        can_read=False,
        can_update=False,
        permissions={},
        data_paths={},
        file_paths={},
        tags=[],
        is_active=True,
        is_delete_protected=False,
        created_date=created,
        created_by=None,
        last_updated_date=created,
        last_updated_by=None,
    )


def present_access(kind: str, row: Access) -> Row:
    """An access object in the shape the interface gives it (`<kind>_id`, `grantee_id`)."""
    out: Row = {
        f"{kind}_id": row.target_id,
        "grantee_id": row.grantee_id,
        "is_admin": row.is_admin,
        "can_read": row.can_read,
        "can_update": row.can_update,
        **access_values.permission_blocks(kind, row.permissions),
        "tags": row.tags,
        "is_delete_protected": row.is_delete_protected,
        "created_date": row.created_date,
        "last_updated_date": row.last_updated_date,
    }
    for name in ("created_by", "last_updated_by"):
        if getattr(row, name) is not None:
            out[name] = getattr(row, name)
    return out


def _described(kind: str, row: Access, target: Row | None) -> Row:
    out = present_access(kind, row)
    out["is_active"] = row.is_active
    if kind == "group":
        out["data_paths"] = row.data_paths
        out["file_paths"] = row.file_paths
    out[f"{kind}_name"] = target["name"] if target else ""
    out[f"{kind}_description"] = target["description"] if target else ""
    out[f"{kind}_tags"] = target["tags"] if target else []
    return out


def present_role_access(row: Access, admin: bool) -> Row:
    out = present_access("role", row)
    out["account_id"] = out.pop("grantee_id")
    out.pop("is_admin")
    if admin:
        out["is_active"] = row.is_active
    return out


def effective(kind: str, level: Level) -> Row:
    """A level's permissions as they act: an admin may do everything at that level."""
    blocks = {
        BLOCKS[r]: (FULL_CRUD if level.is_admin else level.blocks.get(r, NO_CRUD)).to_json()
        for r in BLOCKS_BY_KIND[kind]
    }
    return {
        "is_admin": level.is_admin,
        "can_read": level.is_admin or level.can_read,
        "can_update": level.is_admin or level.can_update,
        **blocks,
    }


def _widgets(items: list[Row]) -> list[Row]:
    if len(items) > MAX_WIDGETS:
        raise ValidationError("widgets", f"must have at most {MAX_WIDGETS} items")
    out = []
    for n, item in enumerate(items):
        where = f"widgets.{n}"
        widget = dict(item)
        widget["order"] = fields.integer(f"{where}.order", item["order"], *ORDER_RANGE)
        for name, required in (("widget_type", True), ("widget_title", False)):
            widget[name] = _widget_text(f"{where}.{name}", item[name], required)
        out.append(widget)
    return out


def _widget_text(field: str, value: Any, required: bool) -> str:
    """Stripped text whose length is counted as sent, as the document's `maxLength` is:
    a title that fits only once stripped would pass here and break the document."""
    if isinstance(value, str) and len(value) > fields.MAX_NAME:
        raise ValidationError(field, f"must be at most {fields.MAX_NAME} characters")
    return fields.text(field, value, required=required)
