"""Pieces of writing accounts (users and devices): a new row's stamps and defaults, and
the access objects a body sets.

An account's `org_permissions` / `project_permissions` are its org access / project access
objects (docs/permissions.md). Setting them on create or patch writes those rows in the
same transaction as the account; a patch merges the given flags into the existing object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edge.access import values as access_values
from edge.access.engine import Caller
from edge.kernel import clock, ids
from edge.kernel.errors import Denied, ValidationError
from edge.tenancy import settings
from storage import access as access_store
from storage.records import Access, Org, Project
from storage.rows import Tx

Row = dict[str, Any]


def new_row(org_id: str, actor: str, defaults: Row, values: Row) -> Row:
    """The columns of a new account: the kind's defaults, fresh stamps, the values given."""
    now = clock.now_iso()
    return {
        **defaults,
        "id": ids.new_id(),
        "org_id": org_id,
        "created_date": now,
        "created_by": actor,
        "last_updated_date": now,
        "last_updated_by": actor,
        **values,
    }


def defaults(org: Org, project: Project | None, kind: str) -> Row:
    """A new account's locale and delete protection: the effective settings of its org and
    project (edge/tenancy/settings.py)."""
    protection = f"{kind}_delete_protection_on_by_default"
    found = settings.of_rows(org, project, ("default_locale", protection))
    return {"locale": found["default_locale"], "is_delete_protected": bool(found[protection])}


@dataclass(frozen=True)
class AccessChange:
    kind: str
    target_id: str
    values: dict[str, Any]


def access_changes(
    grants: Caller, body: dict[str, Any], project_id: str | None, org_id: str, noun: str
) -> list[AccessChange]:
    """The org and project access a create or patch body sets on an account: org access
    by org admins only, project access by the project's admins."""
    out = []
    if "org_permissions" in body:
        if not grants.is_org_admin:
            raise Denied("org_permissions: only org admins may set them")
        out.append(AccessChange("org", org_id, body["org_permissions"]))
    if "project_permissions" in body:
        if project_id is None:
            raise ValidationError(
                "project_permissions",
                f"the {noun} has no project: give project_id or use a project session",
            )
        if not grants.is_project_admin(project_id):
            raise Denied("project_permissions: only admins of the project may set them")
        out.append(AccessChange("project", project_id, body["project_permissions"]))
    return out


def write_access(
    conn: Tx, org_id: str, account_id: str, kind: str, actor: str, change: AccessChange
) -> bool:
    """Create or merge one access object of an account of `kind`; True when it took admin
    status away."""
    current = access_store.get(conn, change.target_id, account_id)
    if current is None:
        row = access_values.new_access(
            change.kind, change.target_id, account_id, kind, org_id, actor, change.values
        )
        access_store.create(conn, row)
        return False
    merged = _merge(current, change.values)
    access_store.patch(
        conn,
        current.id,
        {
            "is_admin": bool(merged.get("is_admin")),
            "can_read": bool(merged.get("can_read")),
            "can_update": bool(merged.get("can_update")),
            "permissions": access_values.permission_blocks(change.kind, merged),
            "last_updated_date": clock.now_iso(),
            "last_updated_by": actor,
        },
    )
    return current.is_admin and not merged.get("is_admin")


def _merge(current: Access, given: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {
        "is_admin": current.is_admin,
        "can_read": current.can_read,
        "can_update": current.can_update,
        **current.permissions,
    }
    for name, value in given.items():
        values[name] = {**values.get(name, {}), **value} if isinstance(value, dict) else value
    return values
