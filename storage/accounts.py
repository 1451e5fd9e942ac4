"""Questions about any account-like grantee (user, device, role) inside an organization."""

from __future__ import annotations

import apsw

from storage.rows import one

ACCOUNT_TABLES = ("users", "devices")


def kind_of(conn: apsw.Connection, org_id: str, grantee_id: str) -> str | None:
    """'user', 'device' or 'role' when the ID names one in this org; None otherwise."""
    row = one(
        conn,
        "SELECT 'user' AS kind FROM users WHERE id = ?1 AND org_id = ?2"
        " UNION ALL SELECT 'device' FROM devices WHERE id = ?1 AND org_id = ?2"
        " UNION ALL SELECT 'role' FROM roles WHERE id = ?1 AND org_id = ?2",
        (grantee_id, org_id),
    )
    return None if row is None else str(row["kind"])


def admin_of(table: str, kind: str, target: str = "") -> str:
    """SQL: the account row of `table` (users or devices) holds active admin access of
    `kind` ('org' or 'project'), directly or through an active role it holds. `target`
    narrows the access further (for example " AND a.target_id = ?")."""
    if table not in ACCOUNT_TABLES:
        raise ValueError(table)
    held_roles = (
        "SELECT ra.target_id FROM access ra JOIN roles r ON r.id = ra.target_id"
        f" AND r.is_active = 1 WHERE ra.kind = 'role' AND ra.is_active = 1"
        f" AND ra.grantee_id = {table}.id"
    )
    return (
        f"EXISTS (SELECT 1 FROM access a WHERE a.kind = '{kind}' AND a.is_admin = 1"
        f" AND a.is_active = 1 AND a.org_id = {table}.org_id{target}"
        f" AND (a.grantee_id = {table}.id OR a.grantee_id IN ({held_roles})))"
    )


def is_org_admin(table: str) -> str:
    return admin_of(table, "org", f" AND a.target_id = {table}.org_id")


def is_any_project_admin(table: str) -> str:
    return admin_of(table, "project")


def is_project_admin(table: str) -> str:
    """Takes one parameter: the project's ID."""
    return admin_of(table, "project", " AND a.target_id = ?")
