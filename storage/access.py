"""Access objects: who (a user, device or role) holds which access to what."""

from __future__ import annotations

import apsw

from storage.listing import Field, Table, common_fields
from storage.rows import Row, insert, many, one, update


def create(conn: apsw.Connection, values: Row) -> None:
    insert(conn, "access", values)


def get(conn: apsw.Connection, target_id: str, grantee_id: str) -> Row | None:
    return one(
        conn, "SELECT * FROM access WHERE target_id = ? AND grantee_id = ?", (target_id, grantee_id)
    )


def patch(conn: apsw.Connection, access_id: str, values: Row) -> bool:
    return update(conn, "access", "id", access_id, values) == 1


def delete(conn: apsw.Connection, access_id: str) -> bool:
    conn.execute("DELETE FROM access WHERE id = ?", (access_id,))
    return conn.changes() == 1


def held_roles(conn: apsw.Connection, account_id: str) -> list[str]:
    """Active roles the account holds through active role access."""
    rows = many(
        conn,
        "SELECT r.id FROM access a JOIN roles r ON r.id = a.target_id"
        " WHERE a.grantee_id = ? AND a.kind = 'role' AND a.is_active = 1 AND r.is_active = 1",
        (account_id,),
    )
    return [str(r["id"]) for r in rows]


def of_grantees(conn: apsw.Connection, org_id: str, grantee_ids: list[str]) -> list[Row]:
    """Every active access object held by these grantees, with its target's project and state."""
    marks = ", ".join("?" for _ in grantee_ids)
    return many(
        conn,
        "SELECT a.*, g.project_id AS group_project_id, coalesce(g.is_active, p.is_active, 1)"
        " AS target_active FROM access a"
        " LEFT JOIN groups g ON a.kind = 'group' AND g.id = a.target_id"
        " LEFT JOIN projects p ON a.kind = 'project' AND p.id = a.target_id"
        f" WHERE a.org_id = ? AND a.is_active = 1 AND a.grantee_id IN ({marks})",
        (org_id, *grantee_ids),
    )


def grantees_of(conn: apsw.Connection, target_id: str) -> list[Row]:
    return many(conn, "SELECT * FROM access WHERE target_id = ?", (target_id,))


def holders_of_role(conn: apsw.Connection, role_id: str) -> list[str]:
    rows = many(
        conn, "SELECT grantee_id FROM access WHERE kind = 'role' AND target_id = ?", (role_id,)
    )
    return [str(r["grantee_id"]) for r in rows]


def _column(kind: str, name: str, sortable: bool = True) -> Field:
    return Field(kind, f"access.{name}", sortable)


LIST = Table(
    "access",
    {
        **common_fields("access"),
        "target_id": _column("id", "target_id"),
        "grantee_id": _column("id", "grantee_id"),
        "is_admin": _column("bool", "is_admin"),
        "can_read": _column("bool", "can_read"),
        "can_update": _column("bool", "can_update"),
    },
)
