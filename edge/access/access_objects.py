"""Access objects of groups and roles: their value rules, writes, and response shapes.

One access object is one row of `access` (built by `edge/access/grants.py`); the services of
groups and roles decide who may touch it, this module what a valid one looks like.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from edge import clock, fields
from edge.access import grants, permissions
from edge.access.permissions import BLOCKS, Crud, Grants, Level
from edge.errors import Conflict, NotFound, ValidationError
from edge.principal import Principal
from storage import access as store
from storage import projects as project_store
from storage.database import Database

MAX_PATH = 1024
MAX_PATHS = 256
PATH_FLAGS = ("can_write", "can_read", "can_update", "can_delete")
LEGACY_PATH_FLAGS = ("can_write", "can_read", "can_delete")
TARGET_KEY = {"org": "org_id", "project": "project_id", "group": "group_id", "role": "role_id"}
AccessRow = dict[str, Any]


class AccessExists(Conflict):
    def __init__(self) -> None:
        super().__init__("This access already exists")


# -- value rules -----------------------------------------------------------------------
def normalize_path(field: str, raw: Any) -> str:
    """A data or file path with its leading '/' (added when missing)."""
    if not isinstance(raw, str):
        raise ValidationError(field, "paths must be strings")
    path = raw.strip()
    if len(path) > MAX_PATH:
        raise ValidationError(field, f"paths must be at most {MAX_PATH} characters")
    return path if path.startswith("/") else "/" + path


def path_permissions(field: str, value: Any, *, legacy: bool) -> dict[str, dict[str, bool]]:
    """`{path: {can_read, can_write, can_delete[, can_update]}}` with every flag spelled out.

    `can_update` exists only for organizations and projects that do not use the legacy
    data and files permissions.
    """
    mapping = fields.mapping(field, value)
    if len(mapping) > MAX_PATHS:
        raise ValidationError(field, f"must hold at most {MAX_PATHS} paths")
    flags = LEGACY_PATH_FLAGS if legacy else PATH_FLAGS
    out: dict[str, dict[str, bool]] = {}
    for raw, perms in mapping.items():
        path = normalize_path(field, raw)
        if path in out:
            raise ValidationError(field, f"'{raw}' names the path '{path}' twice")
        out[path] = _path_flags(f"{field}.{path}", perms, flags)
    return out


def _path_flags(field: str, perms: Any, flags: tuple[str, ...]) -> dict[str, bool]:
    given = fields.mapping(field, perms)
    for name in given:
        if name == "can_update" and name not in flags:
            raise ValidationError(
                f"{field}.can_update",
                "is not available while legacy data and files permissions are in use",
            )
        if name not in flags:
            raise ValidationError(f"{field}.{name}", "is not a permission")
    return {name: fields.boolean(f"{field}.{name}", given.get(name, False)) for name in flags}


def full_paths(legacy: bool) -> dict[str, dict[str, bool]]:
    """Every data or file permission on every path (the creator's own access)."""
    return {"/": dict.fromkeys(LEGACY_PATH_FLAGS if legacy else PATH_FLAGS, True)}


def values_of(kind: str, body: Mapping[str, Any], *, legacy: bool = False) -> dict[str, Any]:
    """The checked values of a create or patch body of one kind of access."""
    out: dict[str, Any] = {}
    for name in ("is_admin", "can_read", "can_update", "is_active", "is_delete_protected"):
        if name in body:
            out[name] = fields.boolean(name, body[name])
    if "tags" in body:
        out["tags"] = fields.tags("tags", body["tags"])
    for name in ("data_paths", "file_paths"):
        if name in body and kind == "group":
            out[name] = path_permissions(name, body[name], legacy=legacy)
    for resource in grants.BLOCKS_BY_KIND[kind]:
        block = BLOCKS[resource]
        if block in body:
            out[block] = Crud.from_json(fields.mapping(block, body[block])).to_json()
    return out


def column_changes(
    kind: str, current: AccessRow, values: Mapping[str, Any], actor: str
) -> dict[str, Any]:
    """The `access` columns a patch changes (a permission block given replaces that block)."""
    changes: dict[str, Any] = {
        name: values[name]
        for name in ("is_admin", "can_read", "can_update", "is_active", "is_delete_protected")
        if name in values
    }
    if "tags" in values:
        changes["tags"] = json.dumps(values["tags"])
    for name in ("data_paths", "file_paths"):
        if name in values:
            changes[name] = json.dumps(values[name])
    blocks = json.loads(current["permissions"])
    given = {
        BLOCKS[r]: values[BLOCKS[r]] for r in grants.BLOCKS_BY_KIND[kind] if BLOCKS[r] in values
    }
    if given:
        changes["permissions"] = json.dumps({**blocks, **given})
    changes.update(last_updated_date=clock.now_iso(), last_updated_by=actor)
    return changes


# -- reading and writing -----------------------------------------------------------------
def find(db: Database, target_id: str, grantee_id: str) -> AccessRow:
    row = db.read(lambda c: store.get(c, target_id, grantee_id))
    if row is None:
        raise NotFound("Access not found")
    return row


def find_optional(db: Database, target_id: str, grantee_id: str) -> AccessRow | None:
    return db.read(lambda c: store.get(c, target_id, grantee_id))


async def create(db: Database, row: AccessRow, check: Callable[[Any], None] | None = None) -> None:
    """Write a new access object; 409 when the grantee already holds access to the target.

    `check` runs inside the same transaction (for limits that a race must not pass).
    """

    def write(conn: Any) -> None:
        if store.get(conn, row["target_id"], row["grantee_id"]) is not None:
            raise AccessExists()
        if check is not None:
            check(conn)
        store.create(conn, row)

    await db.write(write)


async def patch(db: Database, access_id: str, changes: dict[str, Any]) -> None:
    def write(conn: Any) -> None:
        if not store.patch(conn, access_id, changes):
            raise NotFound("Access not found")

    await db.write(write)


async def delete(db: Database, access_id: str) -> None:
    def write(conn: Any) -> None:
        if not store.delete(conn, access_id):
            raise NotFound("Access not found")

    await db.write(write)


def check_home(db: Database, field: str, kind: str, account_id: str, project_id: Any) -> None:
    """A user or role of one project gets access only to that project's targets (or the org's)."""
    _, home = db.read(lambda c: project_store.account_project(c, account_id))
    if project_id is not None and home is not None and home != project_id:
        raise ValidationError(field, f"this {kind} belongs to another project")


def grantee_grants(db: Database, org_id: str, grantee_id: str) -> Grants:
    """What a grantee (user, device or role) holds: to keep group admins off admins."""
    return permissions.load(db, Principal("user", grantee_id, None, org_id))


def is_group_admin(held: Grants, group_id: str, project_id: str | None) -> bool:
    """A group admin, counting admins of the group's project who hold no access to it."""
    return held.is_group_admin(group_id) or held.is_project_admin(project_id)


def is_admin_anywhere(held: Grants) -> bool:
    """An org admin, or an admin of any project."""
    return held.is_org_admin or any(level.is_admin for level in held.projects.values())


def holds_anything(level: Level) -> bool:
    """Whether a level of grants allows anything at all."""
    return (
        level.is_admin
        or level.can_read
        or level.can_update
        or any(any(crud.flags()) for crud in level.blocks.values())
    )


# -- response shapes ---------------------------------------------------------------------
def level_permissions(row: AccessRow | None, kind: str) -> dict[str, Any]:
    """Org or project access as OrgAccessPermissions / ProjectAccessPermissions (none: all off)."""
    blocks = json.loads(row["permissions"]) if row is not None else {}
    out: dict[str, Any] = {
        "is_admin": bool(row and row["is_admin"]),
        "can_read": bool(row and row["can_read"]),
        "can_update": bool(row and row["can_update"]),
    }
    for resource in grants.BLOCKS_BY_KIND[kind]:
        out[BLOCKS[resource]] = Crud.from_json(blocks.get(BLOCKS[resource])).to_json()
    return out


def present(row: AccessRow, *, admin: bool) -> dict[str, Any]:
    """An access row as the interface's access schema of its kind.

    `is_active` (and a group's data and file paths) are for admins only.
    """
    kind = row["kind"]
    out: dict[str, Any] = {
        "id": row["id"],
        TARGET_KEY[kind]: row["target_id"],
        ("account_id" if kind == "role" else "grantee_id"): row["grantee_id"],
        "can_read": bool(row["can_read"]),
        "can_update": bool(row["can_update"]),
    }
    if kind != "role":
        out["is_admin"] = bool(row["is_admin"])
    blocks = json.loads(row["permissions"])
    for resource in grants.BLOCKS_BY_KIND[kind]:
        out[BLOCKS[resource]] = Crud.from_json(blocks.get(BLOCKS[resource])).to_json()
    out["tags"] = json.loads(row["tags"])
    out["is_delete_protected"] = bool(row["is_delete_protected"])
    if admin:
        out["is_active"] = bool(row["is_active"])
        if kind == "group":
            out["data_paths"] = json.loads(row["data_paths"])
            out["file_paths"] = json.loads(row["file_paths"])
    return {**out, **_stamps(row)}


def present_with_target(row: AccessRow, target: Mapping[str, Any] | None) -> dict[str, Any]:
    """Access with its target's name, description and tags (account and role lists)."""
    kind = row["kind"]
    out = present(row, admin=True)
    target = target or {"name": "", "description": "", "tags": "[]"}
    out[f"{kind}_name"] = target["name"]
    out[f"{kind}_description"] = target["description"]
    out[f"{kind}_tags"] = json.loads(target["tags"])
    return out


def _stamps(row: Mapping[str, Any]) -> dict[str, Any]:
    names = ("created_date", "created_by", "last_updated_date", "last_updated_by")
    return {name: row[name] for name in names if row[name] is not None}
