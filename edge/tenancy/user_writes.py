"""Pieces of writing users: the new row, passwords, and the access objects a body sets.

A user's `org_permissions` / `project_permissions` are their org access / project access
objects (docs/permissions.md). Setting them on create or patch writes those rows in the
same transaction as the user; a patch merges the given flags into the existing object.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, fields
from typing import Any

from edge import clock, ids
from edge.access import values as access_values
from edge.access.engine import Caller
from edge.auth import hashing
from edge.errors import Conflict, Denied, ValidationError
from storage import access as access_store
from storage import users as store
from storage.records import Access, User
from storage.rows import Tx

Row = dict[str, Any]
GENERATED_PASSWORD_BYTES = 18


class AccountTaken(Conflict):
    def __init__(self, field: str) -> None:
        super().__init__(f"{field}: is already used by another user of this organization")


@dataclass(frozen=True)
class Secret:
    """The password a new user starts with, and whether they must replace it."""

    hash: str
    temporary: bool
    plain: str = field(default="", repr=False)  # temporary ones only: the invitation mails it


async def initial_password(body: dict[str, Any], username: str) -> Secret:
    """`password` (permanent), `temp_password`, or neither: a generated temporary one."""
    if "password" in body and "temp_password" in body:
        raise ValidationError("password", "give either password or temp_password, not both")
    for name in ("password", "temp_password"):
        if name in body:
            hashing.check_policy(body[name], username=username, field=name)
            temporary = name == "temp_password"
            plain = body[name] if temporary else ""
            return Secret(await hashing.hash(body[name]), temporary, plain)
    generated = secrets.token_urlsafe(GENERATED_PASSWORD_BYTES)
    return Secret(await hashing.hash(generated), temporary=True, plain=generated)


# A new user's columns when neither the request nor the org says otherwise.
USER_DEFAULTS: Row = {
    "password_hash": None,
    "password_last_changed": None,
    "is_active": True,
    "project_id": None,
    "phone_number": None,
    "phone_folded": None,
    "phone_number_verified": False,
    "pending_phone_number": None,
    "first_name": None,
    "middle_name": None,
    "last_name": None,
    "nickname": None,
    "locale": "en-US",
    "zoneinfo": "UTC",
    "picture": None,
    "tags": [],
    "custom_attributes": {},
    "restricted_custom_attributes": {},
    "has_temporary_password": False,
    "new_password_required": False,
    "is_delete_protected": False,
    "preferred_mfa": None,
    "sms_mfa_enabled": False,
    "software_mfa_enabled": False,
}
USER_COLUMNS = frozenset(f.name for f in fields(User))


def new_user(org_id: str, actor: str, values: Row) -> User:
    """A User from the given columns, with the defaults above and fresh stamps."""
    now = clock.now_iso()
    row: Row = {
        **USER_DEFAULTS,
        "id": ids.new_id(),
        "org_id": org_id,
        "created_date": now,
        "created_by": actor,
        "last_updated_date": now,
        "last_updated_by": actor,
        **values,
    }
    row.setdefault("username", row["email"])
    row["username_folded"] = row["username"].casefold()
    row.setdefault("email_folded", row["email"].casefold())
    return User(**{name: row[name] for name in USER_COLUMNS})


def new_row(
    org_id: str,
    project_id: str | None,
    actor: str,
    columns: Row,
    defaults: Row,
    secret: Secret,
) -> User:
    values: Row = {
        "project_id": project_id,
        "password_hash": secret.hash,
        "password_last_changed": clock.now_iso(),
        "has_temporary_password": secret.temporary,
        "new_password_required": secret.temporary,
        **defaults,
        **columns,
    }
    return new_user(org_id, actor, values)


def logins(columns: Row) -> dict[str, str]:
    """The login values a write sets, folded, for the uniqueness check."""
    out = {}
    for name, column in (("email", "email_folded"), ("username", "username_folded")):
        if column in columns:
            out[name] = str(columns[column])
    if columns.get("phone_folded"):
        out["phone_number"] = str(columns["phone_folded"])
    return out


def check_unique(conn: Tx, org_id: str, user_id: str, columns: Row) -> None:
    taken = store.clash(conn, org_id, user_id, logins(columns))
    if taken is not None:
        raise AccountTaken(taken)


@dataclass(frozen=True)
class AccessChange:
    kind: str
    target_id: str
    values: dict[str, Any]


def access_changes(
    grants: Caller, body: dict[str, Any], project_id: str | None, org_id: str, noun: str = "user"
) -> list[AccessChange]:
    """The org and project access a create or patch body sets on an account (a user or a
    device): org access by org admins only, project access by the project's admins."""
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
    conn: Tx,
    org_id: str,
    user_id: str,
    actor: str,
    change: AccessChange,
    grantee_kind: str = "user",
) -> bool:
    """Create or merge one access object of an account (a user, or a device); True when it
    took admin status away."""
    current = access_store.get(conn, change.target_id, user_id)
    if current is None:
        row = access_values.new_access(
            change.kind, change.target_id, user_id, grantee_kind, org_id, actor, change.values
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
