"""Groups: collections of users, devices and roles, each with its own data and files."""

from __future__ import annotations

import apsw

from storage.listing import Field, Table, common_fields
from storage.rows import Row, insert, one, update


def create(conn: apsw.Connection, values: Row) -> None:
    insert(conn, "groups", values)


def get(conn: apsw.Connection, group_id: str) -> Row | None:
    return one(conn, "SELECT * FROM groups WHERE id = ?", (group_id,))


def patch(conn: apsw.Connection, group_id: str, values: Row) -> bool:
    return update(conn, "groups", "id", group_id, values) == 1


def delete(conn: apsw.Connection, group_id: str) -> bool:
    conn.execute("DELETE FROM groups WHERE id = ?", (group_id,))
    return conn.changes() == 1


def _column(kind: str, name: str, sortable: bool = True, folded: bool = False) -> Field:
    return Field(kind, f"groups.{name}", sortable, f"groups.{name}_folded" if folded else None)


LIST = Table(
    "groups",
    {
        **common_fields("groups"),
        "name": _column("text", "name", folded=True),
        "description": _column("text", "description"),
        "project_id": _column("id", "project_id"),
        "require_delete_permission_to_put_data": _column(
            "bool", "require_delete_permission_to_put_data"
        ),
    },
    fts="groups_fts",
    fts_columns=("name", "description", "tags"),
)


def visible(
    org_id: str,
    project_scope: str | None,
    everything: bool,
    project_ids: list[str],
    group_ids: list[str],
) -> tuple[str, tuple[str, ...]]:
    """List scope: this org's groups (of one project in project scope) the caller may read."""
    clauses, params = ["groups.org_id = ?"], [org_id]
    if project_scope:
        clauses.append("groups.project_id = ?")
        params.append(project_scope)
    if not everything:
        projects = ", ".join("?" for _ in project_ids) or "NULL"
        groups = ", ".join("?" for _ in group_ids) or "NULL"
        clauses.append(f"(groups.project_id IN ({projects}) OR groups.id IN ({groups}))")
        params.extend([*project_ids, *group_ids])
    return " AND ".join(clauses), tuple(params)
