"""Roles: named bundles of access that users and devices hold as their own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import apsw

from storage.listing import Field, Table, common_fields
from storage.rows import Row, insert, many, one, scalar, update


def create(conn: apsw.Connection, values: Row) -> None:
    insert(conn, "roles", values)


def get(conn: apsw.Connection, role_id: str) -> Row | None:
    return one(conn, "SELECT * FROM roles WHERE id = ?", (role_id,))


def patch(conn: apsw.Connection, role_id: str, values: Row) -> bool:
    return update(conn, "roles", "id", role_id, values) == 1


def delete(conn: apsw.Connection, role_id: str) -> bool:
    conn.execute("DELETE FROM roles WHERE id = ?", (role_id,))
    return conn.changes() == 1


def levels_of(conn: apsw.Connection, role_ids: list[str]) -> list[Row]:
    """The org and project access these roles hold (their org/project permissions)."""
    if not role_ids:
        return []
    marks = ", ".join("?" for _ in role_ids)
    return many(
        conn,
        "SELECT * FROM access WHERE kind IN ('org', 'project')"
        f" AND grantee_kind = 'role' AND grantee_id IN ({marks})",
        role_ids,
    )


def group_access_of(conn: apsw.Connection, role_ids: list[str], group_id: str) -> list[Row]:
    if not role_ids:
        return []
    marks = ", ".join("?" for _ in role_ids)
    return many(
        conn,
        f"SELECT * FROM access WHERE kind = 'group' AND target_id = ? AND grantee_id IN ({marks})",
        (group_id, *role_ids),
    )


def target_ids(conn: apsw.Connection, role_id: str, kind: str) -> list[str]:
    """The projects or groups a role holds access to."""
    rows = many(
        conn,
        "SELECT target_id FROM access WHERE grantee_id = ? AND kind = ? ORDER BY created_date",
        (role_id, kind),
    )
    return [str(r["target_id"]) for r in rows]


def count_held(conn: apsw.Connection, account_id: str) -> int:
    """How many roles an account holds (active or not)."""
    return int(
        scalar(
            conn,
            "SELECT count(*) FROM access WHERE kind = 'role' AND grantee_id = ?",
            (account_id,),
        )
    )


def _column(kind: str, name: str, sortable: bool = True, folded: bool = False) -> Field:
    return Field(kind, f"roles.{name}", sortable, f"roles.{name}_folded" if folded else None)


_PROJECT_ADMIN = (
    "coalesce((SELECT a.is_admin FROM access a WHERE a.kind = 'project'"
    " AND a.grantee_id = roles.id AND a.target_id = roles.project_id), 0)"
)

LIST = Table(
    "roles",
    {
        **common_fields("roles"),
        "name": _column("text", "name", folded=True),
        "description": _column("text", "description"),
        "project_id": _column("id", "project_id"),
        "is_project_admin": Field("bool", _PROJECT_ADMIN, sortable=False),
    },
    fts="roles_fts",
    fts_columns=("name", "description", "tags"),
    json_columns=("custom_attributes", "restricted_custom_attributes"),
)


def readable_held(conn: apsw.Connection, account_id: str) -> list[str]:
    """Roles the account holds through active role access that lets it read them."""
    rows = many(
        conn,
        "SELECT target_id FROM access WHERE kind = 'role' AND grantee_id = ?"
        " AND is_active = 1 AND can_read = 1",
        (account_id,),
    )
    return [str(r["target_id"]) for r in rows]


def _marks(values: list[str]) -> str:
    return ", ".join("?" for _ in values) or "NULL"


@dataclass
class Reach:
    """Roles a caller may read without reading every role of the org: roles of `projects`,
    roles with access to `groups` or to any group of `group_projects`, and `roles`."""

    projects: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    group_projects: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)

    def clause(self) -> tuple[str, list[Any]]:
        in_groups = "SELECT grantee_id FROM access WHERE kind = 'group'"
        sql = (
            f"(roles.project_id IN ({_marks(self.projects)})"
            f" OR roles.id IN ({_marks(self.roles)})"
            f" OR roles.id IN ({in_groups} AND target_id IN ({_marks(self.groups)}))"
            f" OR roles.id IN ({in_groups} AND target_id IN (SELECT id FROM groups"
            f" WHERE project_id IN ({_marks(self.group_projects)}))))"
        )
        return sql, [*self.projects, *self.roles, *self.groups, *self.group_projects]


def visible(
    org_id: str,
    project_scope: str | None,
    reach: Reach | None,
    group_filter: tuple[str, bool | None] | None = None,
) -> tuple[str, tuple[Any, ...]]:
    """List scope: this org's roles the caller may read (of one project in project scope).

    `reach` is None when the caller may read every role. `group_filter` keeps roles with
    access to one group (and whose access there is, or is not, admin).
    """
    clauses, params = ["roles.org_id = ?"], list[Any]([org_id])
    if project_scope:
        clauses.append("roles.project_id = ?")
        params.append(project_scope)
    if reach is not None:
        sql, more = reach.clause()
        clauses.append(sql)
        params.extend(more)
    if group_filter is not None:
        group_id, admin = group_filter
        member = "SELECT grantee_id FROM access WHERE kind = 'group' AND target_id = ?"
        params.append(group_id)
        if admin is not None:
            member += " AND is_admin = ?"
            params.append(int(admin))
        clauses.append(f"roles.id IN ({member})")
    return " AND ".join(clauses), tuple(params)
