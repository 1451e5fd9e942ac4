"""Building access-object rows: the one shape every kind of access is stored in."""

from __future__ import annotations

import json
from typing import Any

from edge import clock, ids
from edge.access.permissions import BLOCKS, FULL_CRUD, RESOURCES, Crud

# The permission blocks each kind of access carries (the interface's models).
BLOCKS_BY_KIND: dict[str, tuple[str, ...]] = {
    "org": ("user", "device", "role", "group", "project"),
    "project": ("user", "device", "group", "role"),
    "group": ("user", "device", "role"),
    "role": ("user", "device"),
}


def permission_blocks(kind: str, body: dict[str, Any]) -> dict[str, dict[str, bool]]:
    """The CRUD blocks of one access kind, from a request body (missing blocks are all false)."""
    return {BLOCKS[r]: Crud.from_json(body.get(BLOCKS[r])).to_json() for r in BLOCKS_BY_KIND[kind]}


def new_row(
    kind: str,
    target_id: str,
    grantee_id: str,
    grantee_kind: str,
    org_id: str,
    actor: str,
    values: dict[str, Any],
) -> dict[str, Any]:
    now = clock.now_iso()
    return {
        "id": ids.access_id(target_id, grantee_id),
        "kind": kind,
        "target_id": target_id,
        "grantee_id": grantee_id,
        "grantee_kind": grantee_kind,
        "org_id": org_id,
        "is_admin": bool(values.get("is_admin", False)),
        "can_read": bool(values.get("can_read", False)),
        "can_update": bool(values.get("can_update", False)),
        "permissions": json.dumps(permission_blocks(kind, values)),
        "data_paths": json.dumps(values.get("data_paths") or {}),
        "file_paths": json.dumps(values.get("file_paths") or {}),
        "tags": json.dumps(values.get("tags") or []),
        "is_active": True,
        "is_delete_protected": bool(values.get("is_delete_protected", False)),
        "created_date": now,
        "created_by": actor,
        "last_updated_date": now,
        "last_updated_by": actor,
    }


def org_admin_row(org_id: str, user_id: str, actor: str) -> dict[str, Any]:
    full = {BLOCKS[r]: FULL_CRUD.to_json() for r in RESOURCES}
    return new_row(
        "org",
        org_id,
        user_id,
        "user",
        org_id,
        actor,
        {"is_admin": True, "can_read": True, "can_update": True, **full},
    )
