"""What a valid access object looks like: the checked values of a request body, the record
they make, the changes a patch makes, and the shapes the interface answers with.

Every kind of access (org, project, group, role) is one `Access` record; a kind differs
only in the permission blocks it carries (`BLOCKS_BY_KIND`) and, for groups, data and file
paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from edge.access.levels import BLOCKS, BLOCKS_BY_KIND, FULL_CRUD, RESOURCES, Crud, crud_json
from edge.access.paths import requested_grant_path
from edge.kernel import clock, fields, ids
from edge.kernel.errors import ValidationError
from storage.records import Access

MAX_PATH = 1024
MAX_PATHS = 256
PATH_FLAGS = ("can_write", "can_read", "can_update", "can_delete")
LEGACY_PATH_FLAGS = ("can_write", "can_read", "can_delete")
TARGET_KEY = {"org": "org_id", "project": "project_id", "group": "group_id", "role": "role_id"}
FLAG_NAMES = ("is_admin", "can_read", "can_update", "is_active", "is_delete_protected")
Paths = dict[str, dict[str, bool]]


# -- value rules -----------------------------------------------------------------------
def normalize_path(field: str, raw: Any) -> str:
    """A data or file path as grants spell it (edge/access/paths.py `requested_grant_path`):
    a leading '/' (added when missing), no trailing one, and none that no data or file
    could have. Spaces are kept, at the ends too, as data and file paths keep them: a
    grant meant to take `/report.pdf ` away was stored as `/report.pdf`."""
    if not isinstance(raw, str):
        raise ValidationError(field, "paths must be strings")
    path = raw
    if len(path) > MAX_PATH:
        raise ValidationError(field, f"paths must be at most {MAX_PATH} characters")
    return requested_grant_path(field, path)


def path_permissions(field: str, value: Any, *, legacy: bool) -> Paths:
    """`{path: {can_read, can_write, can_delete[, can_update]}}` with every flag spelled out.

    `can_update` exists only for organizations and projects that do not use the legacy
    data and files permissions.
    """
    mapping = fields.mapping(field, value)
    if len(mapping) > MAX_PATHS:
        raise ValidationError(field, f"must hold at most {MAX_PATHS} paths")
    flags = LEGACY_PATH_FLAGS if legacy else PATH_FLAGS
    out: Paths = {}
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


def full_paths(legacy: bool) -> Paths:
    """Every data or file permission on every path (the creator's own access)."""
    return {"/": dict.fromkeys(LEGACY_PATH_FLAGS if legacy else PATH_FLAGS, True)}


def values_of(kind: str, body: Mapping[str, Any], *, legacy: bool = False) -> dict[str, Any]:
    """The checked values of a create or patch body of one kind of access."""
    out: dict[str, Any] = {}
    for name in FLAG_NAMES:
        if name in body:
            out[name] = fields.boolean(name, body[name])
    if "tags" in body:
        out["tags"] = fields.tags("tags", body["tags"])
    for name in ("data_paths", "file_paths"):
        if name in body and kind == "group":
            out[name] = path_permissions(name, body[name], legacy=legacy)
    for resource in BLOCKS_BY_KIND[kind]:
        block = BLOCKS[resource]
        if block in body:
            out[block] = Crud.from_json(fields.mapping(block, body[block])).to_json()
    return out


def permission_blocks(kind: str, values: Mapping[str, Any]) -> dict[str, dict[str, bool]]:
    """The CRUD blocks of one access kind, from checked values (missing blocks all false)."""
    return {
        BLOCKS[r]: Crud.from_json(values.get(BLOCKS[r])).to_json() for r in BLOCKS_BY_KIND[kind]
    }


def changes_of(kind: str, current: Access, values: Mapping[str, Any], actor: str) -> dict[str, Any]:
    """The columns a patch changes (a permission block given replaces that block)."""
    changes: dict[str, Any] = {n: values[n] for n in FLAG_NAMES if n in values}
    for name in ("tags", "data_paths", "file_paths"):
        if name in values:
            changes[name] = values[name]
    given = {BLOCKS[r]: values[BLOCKS[r]] for r in BLOCKS_BY_KIND[kind] if BLOCKS[r] in values}
    if given:
        changes["permissions"] = {**current.permissions, **given}
    changes.update(last_updated_date=clock.now_iso(), last_updated_by=actor)
    return changes


# -- new records -------------------------------------------------------------------------
def new_access(
    kind: str,
    target_id: str,
    grantee_id: str,
    grantee_kind: str,
    org_id: str,
    actor: str,
    values: Mapping[str, Any],
) -> Access:
    now = clock.now_iso()
    return Access(
        id=ids.access_id(target_id, grantee_id),
        kind=kind,
        target_id=target_id,
        grantee_id=grantee_id,
        grantee_kind=grantee_kind,
        org_id=org_id,
        is_admin=bool(values.get("is_admin", False)),
        can_read=bool(values.get("can_read", False)),
        can_update=bool(values.get("can_update", False)),
        permissions=permission_blocks(kind, values),
        data_paths=dict(values.get("data_paths") or {}),
        file_paths=dict(values.get("file_paths") or {}),
        tags=list(values.get("tags") or []),
        is_active=True,
        is_delete_protected=bool(values.get("is_delete_protected", False)),
        created_date=now,
        created_by=actor,
        last_updated_date=now,
        last_updated_by=actor,
    )


def full_values(kind: str) -> dict[str, Any]:
    """Admin with every block of the kind: what a creator gets on what they create."""
    blocks = {BLOCKS[r]: FULL_CRUD.to_json() for r in BLOCKS_BY_KIND[kind]}
    return {"is_admin": True, "can_read": True, "can_update": True, **blocks}


def org_admin(org_id: str, user_id: str, actor: str) -> Access:
    every = {BLOCKS[r]: FULL_CRUD.to_json() for r in RESOURCES}
    values = {"is_admin": True, "can_read": True, "can_update": True, **every}
    return new_access("org", org_id, user_id, "user", org_id, actor, values)


# -- response shapes ---------------------------------------------------------------------
def level_permissions(access: Access | None, kind: str) -> dict[str, Any]:
    """Org or project access as OrgAccessPermissions / ProjectAccessPermissions (none: all off)."""
    blocks = access.permissions if access is not None else {}
    out: dict[str, Any] = {
        "is_admin": bool(access and access.is_admin),
        "can_read": bool(access and access.can_read),
        "can_update": bool(access and access.can_update),
    }
    for resource in BLOCKS_BY_KIND[kind]:
        out[BLOCKS[resource]] = crud_json(blocks.get(BLOCKS[resource]))
    return out


def present(access: Access, *, admin: bool) -> dict[str, Any]:
    """An access object as the interface's access schema of its kind.

    `is_active` (and a group's data and file paths) are for admins only.
    """
    kind = access.kind
    out: dict[str, Any] = {
        "id": access.id,
        TARGET_KEY[kind]: access.target_id,
        ("account_id" if kind == "role" else "grantee_id"): access.grantee_id,
        "can_read": access.can_read,
        "can_update": access.can_update,
    }
    if kind != "role":
        out["is_admin"] = access.is_admin
    for resource in BLOCKS_BY_KIND[kind]:
        out[BLOCKS[resource]] = crud_json(access.permissions.get(BLOCKS[resource]))
    out["tags"] = access.tags
    out["is_delete_protected"] = access.is_delete_protected
    if admin:
        out["is_active"] = access.is_active
        if kind == "group":
            out["data_paths"] = access.data_paths
            out["file_paths"] = access.file_paths
    return {**out, **_stamps(access)}


def present_with_target(access: Access, target: Mapping[str, Any] | None) -> dict[str, Any]:
    """Access with its target's name, description and tags (account and role lists)."""
    kind = access.kind
    out = present(access, admin=True)
    target = target or {"name": "", "description": "", "tags": []}
    out[f"{kind}_name"] = target["name"]
    out[f"{kind}_description"] = target["description"]
    out[f"{kind}_tags"] = target["tags"]
    return out


def _stamps(access: Access) -> dict[str, Any]:
    names = ("created_date", "created_by", "last_updated_date", "last_updated_by")
    return {name: getattr(access, name) for name in names if getattr(access, name) is not None}
