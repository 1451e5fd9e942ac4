"""The caller's own access objects, listed with their target's name, description and tags.

One list spec per kind (groups, projects, roles). Target fields are subqueries on the
target's table, so the list engine filters and sorts on them like on any column.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from storage.listing import Field, Scope, Table
from storage.records import ACCESS
from storage.rows import Row, Tx, many

_CRUD = ("can_create", "can_read", "can_update", "can_delete")
TARGET_TABLES = {"group": "groups", "project": "projects", "role": "roles"}


def _column(kind: str, name: str, sortable: bool = True) -> Field:
    return Field(kind, f"access.{name}", sortable)


def _blocks(*resources: str) -> dict[str, Field]:
    return {
        f"{r}_permissions_{flag}": Field(
            "bool", f"json_extract(access.permissions, '$.{r}_permissions.{flag}')"
        )
        for r in resources
        for flag in _CRUD
    }


def _target(kind: str, column: str, field_kind: str, folded: str | None = None) -> Field:
    table = TARGET_TABLES[kind]
    select = "(SELECT t.{} FROM " + table + " t WHERE t.id = access.target_id)"
    return Field(
        field_kind,
        select.format(column),
        field_kind != "tags",
        select.format(folded) if folded else None,
    )


_COMMON = {
    "id": Field("id", "access.id", not_null=True),
    "can_read": _column("bool", "can_read"),
    "can_update": _column("bool", "can_update"),
    "is_active": _column("bool", "is_active"),
    "is_delete_protected": _column("bool", "is_delete_protected"),
    "tags": _column("tags", "tags", sortable=False),
    "created_date": Field("datetime", "access.created_date", not_null=True),
    "created_by": _column("id", "created_by"),
    "last_updated_date": _column("datetime", "last_updated_date"),
    "last_updated_by": _column("id", "last_updated_by"),
}


def _described(kind: str) -> dict[str, Field]:
    return {
        f"{kind}_id": _column("id", "target_id"),
        "grantee_id": _column("id", "grantee_id"),
        "is_admin": _column("bool", "is_admin"),
        f"{kind}_name": _target(kind, "name", "text", folded="name_folded"),
        f"{kind}_description": _target(kind, "description", "text"),
        f"{kind}_tags": _target(kind, "tags", "tags"),
    }


def _search(kind: str, *columns: str) -> dict[str, Any]:
    """An access object is searched by its target: the words of the target's own index
    (name, description, tags; a project's alias too), those its `<kind>_name` filters."""
    return {
        "fts": f"{TARGET_TABLES[kind]}_fts",
        "fts_columns": ("name", *columns, "description", "tags"),
        "fts_join": ("access.target_id", "id"),
    }


GROUPS = Table(
    "access",
    {
        **_COMMON,
        **_described("group"),
        "project_id": _target("group", "project_id", "id"),
        **_blocks("user", "device", "role"),
    },
    codec=ACCESS,
    **_search("group"),
)
PROJECTS = Table(
    "access",
    {**_COMMON, **_described("project"), **_blocks("user", "device", "group", "role")},
    codec=ACCESS,
    **_search("project", "alias"),
)
ROLES = Table(
    "access",
    {
        **_COMMON,
        "role_id": _column("id", "target_id"),
        "account_id": _column("id", "grantee_id"),
        "project_id": _target("role", "project_id", "id"),
        **_blocks("user", "device"),
    },
    codec=ACCESS,
    **_search("role"),
)


def held_by(org_id: str, kind: str, grantee_ids: Sequence[str]) -> Scope:
    marks = ", ".join("?" for _ in grantee_ids)
    return Scope(
        f"access.org_id = ? AND access.kind = ? AND access.grantee_id IN ({marks})",
        (org_id, kind, *grantee_ids),
    )


def target_active(kind: str) -> Scope:
    table = TARGET_TABLES[kind]
    return Scope(f"(SELECT t.is_active FROM {table} t WHERE t.id = access.target_id) = 1")


def target_in_project(kind: str, project_id: str) -> Scope:
    """Access to this project (a project is its own project), or to a group or role of it."""
    if kind == "project":
        return Scope("access.target_id = ?", (project_id,))
    table = TARGET_TABLES[kind]
    sql = f"(SELECT t.project_id FROM {table} t WHERE t.id = access.target_id) = ?"
    return Scope(sql, (project_id,))


def role_holds_group(group_id: str) -> Scope:
    """Role access whose role holds active access to this group."""
    return Scope(
        "access.target_id IN (SELECT grantee_id FROM access WHERE kind = 'group'"
        " AND is_active = 1 AND target_id = ?)",
        (group_id,),
    )


def targets(conn: Tx, kind: str, target_ids: Sequence[str]) -> dict[str, Row]:
    """Name, description and tags of these targets, by ID."""
    if not target_ids:
        return {}
    marks = ", ".join("?" for _ in target_ids)
    rows = many(
        conn,
        f"SELECT id, name, description, tags FROM {TARGET_TABLES[kind]} WHERE id IN ({marks})",
        tuple(target_ids),
    )
    return {str(r["id"]): {**r, "tags": json.loads(r["tags"])} for r in rows}
