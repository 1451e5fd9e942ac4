"""Roles: named bundles of access that users and devices hold as their own."""

from __future__ import annotations

from collections.abc import Sequence

from storage.access import marks
from storage.listing import Field, Scope, Table, common_fields
from storage.records import ACCESS, ROLES, Access, Role
from storage.rows import Tx, insert_record, record, records, scalar, update_record


def create(conn: Tx, value: Role) -> None:
    insert_record(conn, ROLES, value)


def get(conn: Tx, role_id: str) -> Role | None:
    return record(conn, ROLES, "id = ?", (role_id,))


def patch(conn: Tx, role_id: str, changes: dict[str, object]) -> bool:
    return update_record(conn, ROLES, role_id, changes)


def delete(conn: Tx, role_id: str) -> bool:
    conn.execute("DELETE FROM roles WHERE id = ?", (role_id,))
    return conn.changes() == 1


def levels_of(conn: Tx, role_ids: Sequence[str]) -> list[Access]:
    """The org and project access these roles hold (their org/project permissions)."""
    if not role_ids:
        return []
    sql = (
        f"SELECT {ACCESS.select} FROM access WHERE access.kind IN ('org', 'project')"
        f" AND access.grantee_kind = 'role' AND access.grantee_id IN ({marks(role_ids)})"
    )
    return records(conn, ACCESS, sql, tuple(role_ids))


def group_access_of(conn: Tx, role_ids: Sequence[str], group_id: str) -> list[Access]:
    if not role_ids:
        return []
    sql = (
        f"SELECT {ACCESS.select} FROM access WHERE access.kind = 'group'"
        f" AND access.target_id = ? AND access.grantee_id IN ({marks(role_ids)})"
    )
    return records(conn, ACCESS, sql, (group_id, *role_ids))


def target_ids(conn: Tx, role_id: str, kind: str) -> list[str]:
    """The projects or groups a role holds access to."""
    rows = conn.execute(
        "SELECT target_id FROM access WHERE grantee_id = ? AND kind = ? ORDER BY created_date",
        (role_id, kind),
    )
    return [str(r[0]) for r in rows]


# -- what the permission engine asks about a role's own holdings ---------------------------
# A role may hold access to many groups; these answer with one indexed query each instead
# of loading them.
def group_readable_through(conn: Tx, role_id: str, grantees: Sequence[str], action: str) -> bool:
    """Whether the role holds active access to an active group where the caller
    (`grantees`) may act on roles (`action`): through a block there, as its group admin,
    or as an admin of the group's project."""
    block = f"json_extract(c.permissions, '$.role_permissions.can_{action}')"
    sql = (
        "SELECT 1 FROM access m JOIN groups g ON g.id = m.target_id AND g.is_active = 1"
        " WHERE m.grantee_id = ? AND m.kind = 'group' AND m.is_active = 1"
        " AND (EXISTS (SELECT 1 FROM access c WHERE c.target_id = m.target_id"
        f" AND c.grantee_id IN ({marks(grantees)}) AND c.is_active = 1"
        f" AND (c.is_admin = 1 OR {block} = 1))"
        " OR EXISTS (SELECT 1 FROM access c JOIN projects p ON p.id = c.target_id"
        " AND p.is_active = 1 WHERE c.target_id = g.project_id"
        f" AND c.grantee_id IN ({marks(grantees)}) AND c.is_active = 1 AND c.is_admin = 1))"
        " LIMIT 1"
    )
    return scalar(conn, sql, (role_id, *grantees, *grantees)) is not None


def holds_beyond(conn: Tx, role_id: str, grantees: Sequence[str]) -> bool:
    """Whether the role holds active access to an active project the caller does not
    administer, or to an active group they are not an admin of (directly, or through the
    group's active project)."""
    admin = (
        "EXISTS (SELECT 1 FROM access c WHERE c.target_id = {target}"
        f" AND c.grantee_id IN ({marks(grantees)}) AND c.is_active = 1 AND c.is_admin = 1"
        "{extra})"
    )
    project_active = " AND (SELECT is_active FROM projects WHERE id = c.target_id) = 1"
    sql = (
        "SELECT 1 FROM access m LEFT JOIN groups g ON m.kind = 'group' AND g.id = m.target_id"
        " LEFT JOIN projects p ON m.kind = 'project' AND p.id = m.target_id"
        " WHERE m.grantee_id = ? AND m.is_active = 1 AND ("
        f" (p.is_active = 1 AND NOT {admin.format(target='m.target_id', extra='')})"
        f" OR (g.is_active = 1 AND NOT {admin.format(target='m.target_id', extra='')}"
        f" AND NOT {admin.format(target='g.project_id', extra=project_active)})) LIMIT 1"
    )
    params = (role_id, *grantees, *grantees, *grantees)
    return scalar(conn, sql, params) is not None


def _column(kind: str, name: str, folded: bool = False) -> Field:
    sql = f"roles.{name}"
    return Field(kind, sql, True, f"{sql}_folded" if folded else None, not_null=folded)


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
    codec=ROLES,
)


def in_org(org_id: str, project_scope: str | None) -> Scope:
    if project_scope:
        return Scope("roles.org_id = ? AND roles.project_id = ?", (org_id, project_scope))
    return Scope("roles.org_id = ?", (org_id,))


def with_group_access(group_id: str, admin: bool | None) -> Scope:
    """Roles with access to one group (and whose access there is, or is not, admin)."""
    sql = "SELECT grantee_id FROM access WHERE kind = 'group' AND target_id = ?"
    params: tuple[object, ...] = (group_id,)
    if admin is not None:
        sql += " AND is_admin = ?"
        params = (group_id, int(admin))
    return Scope(f"roles.id IN ({sql})", params)
