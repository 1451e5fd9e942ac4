"""Groups: collections of users, devices and roles, each with its own data and files."""

from __future__ import annotations

from storage.listing import Field, Scope, Table, common_fields
from storage.records import GROUPS, Group
from storage.rows import Tx, insert_record, record, update_record


def create(conn: Tx, value: Group) -> None:
    insert_record(conn, GROUPS, value)


def get(conn: Tx, group_id: str) -> Group | None:
    return record(conn, GROUPS, "id = ?", (group_id,))


def patch(conn: Tx, group_id: str, changes: dict[str, object]) -> bool:
    return update_record(conn, GROUPS, group_id, changes)


def delete(conn: Tx, group_id: str) -> bool:
    conn.execute("DELETE FROM groups WHERE id = ?", (group_id,))
    return conn.changes() == 1


def _column(kind: str, name: str, folded: bool = False) -> Field:
    sql = f"groups.{name}"
    return Field(kind, sql, True, f"{sql}_folded" if folded else None, not_null=folded)


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
    codec=GROUPS,
)


def in_org(org_id: str, project_scope: str | None) -> Scope:
    """List scope: this org's groups, or one project's in project scope."""
    if project_scope:
        return Scope("groups.org_id = ? AND groups.project_id = ?", (org_id, project_scope))
    return Scope("groups.org_id = ?", (org_id,))
