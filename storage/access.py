"""Access objects: who (a user, device or role) holds which access to what.

Every query here reads what concerns one target or one grantee through an index: the
unique (target_id, grantee_id) pair for "what do these grantees hold on T", and
(grantee_id, kind, ...) for "what does this account hold". None reads all the access a
caller holds, so the cost of a permission check does not grow with it.
"""

from __future__ import annotations

from collections.abc import Sequence

from storage.listing import Field, Table, common_fields
from storage.records import ACCESS, Access
from storage.rows import (
    Tx,
    insert_record,
    record,
    records,
    scalar,
    update_record,
)

TARGET_TABLES = {"project": "projects", "group": "groups", "role": "roles"}


def marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values) or "NULL"


def create(conn: Tx, value: Access) -> None:
    insert_record(conn, ACCESS, value)


def get(conn: Tx, target_id: str, grantee_id: str) -> Access | None:
    return record(conn, ACCESS, "target_id = ? AND grantee_id = ?", (target_id, grantee_id))


def patch(conn: Tx, access_id: str, changes: dict[str, object]) -> bool:
    return update_record(conn, ACCESS, access_id, changes)


def delete(conn: Tx, access_id: str) -> bool:
    conn.execute("DELETE FROM access WHERE id = ?", (access_id,))
    return conn.changes() == 1


def epoch(conn: Tx) -> int:
    """Bumped by triggers (migration 0007) whenever a permission answer may have changed."""
    return int(scalar(conn, "SELECT value FROM access_epoch WHERE id = 1") or 0)


def bump_epoch(conn: Tx) -> None:
    """For changes no trigger sees: org and project settings, which callers keep too."""
    conn.execute("UPDATE access_epoch SET value = value + 1 WHERE id = 1")


# -- point queries of the permission engine ----------------------------------------------
def held_roles(conn: Tx, account_id: str) -> list[str]:
    """Active roles the account holds through active role access (a few: the org caps it)."""
    rows = conn.execute(
        "SELECT a.target_id FROM access a JOIN roles r ON r.id = a.target_id"
        " WHERE a.grantee_id = ? AND a.kind = 'role' AND a.is_active = 1 AND r.is_active = 1",
        (account_id,),
    )
    return [str(row[0]) for row in rows]


def held_on(conn: Tx, target_id: str, grantee_ids: Sequence[str]) -> list[Access]:
    """The active access these grantees hold on one target whose own state is active
    (an org, or an active project, group or role)."""
    sql = (
        f"SELECT {ACCESS.select} FROM access WHERE access.target_id = ?"
        f" AND access.grantee_id IN ({marks(grantee_ids)}) AND access.is_active = 1"
        " AND (access.kind = 'org' OR coalesce("
        "(SELECT is_active FROM projects WHERE id = access.target_id AND access.kind = 'project'),"
        " (SELECT is_active FROM groups WHERE id = access.target_id AND access.kind = 'group'),"
        " (SELECT is_active FROM roles WHERE id = access.target_id AND access.kind = 'role'), 0)"
        " = 1)"
    )
    return records(conn, ACCESS, sql, (target_id, *grantee_ids))


def admin_of_any_project(conn: Tx, grantee_ids: Sequence[str]) -> bool:
    """Whether these grantees hold admin access to any active project (a partial index
    holds admin grants only, so this never reads the rest)."""
    sql = (
        "SELECT 1 FROM access a JOIN projects p ON p.id = a.target_id AND p.is_active = 1"
        f" WHERE a.grantee_id IN ({marks(grantee_ids)}) AND a.kind = 'project'"
        " AND a.is_admin = 1 AND a.is_active = 1 LIMIT 1"
    )
    return scalar(conn, sql, tuple(grantee_ids)) is not None


def admin_projects(conn: Tx, grantee_ids: Sequence[str]) -> list[str]:
    """The active projects these grantees administer."""
    sql = (
        "SELECT DISTINCT a.target_id FROM access a"
        " JOIN projects p ON p.id = a.target_id AND p.is_active = 1"
        f" WHERE a.grantee_id IN ({marks(grantee_ids)}) AND a.kind = 'project'"
        " AND a.is_admin = 1 AND a.is_active = 1"
    )
    return [str(row[0]) for row in conn.execute(sql, tuple(grantee_ids))]


def projects_allowing(
    conn: Tx, grantee_ids: Sequence[str], resource: str, action: str
) -> list[str]:
    """The active projects where these grantees hold active admin access, or a block
    allowing `action` on `resource`. Bounded by the project access they hold (read when
    a user tool connects to the broker, never per message)."""
    flag = f"$.{resource}_permissions.can_{action}"
    sql = (
        "SELECT DISTINCT a.target_id FROM access a"
        " JOIN projects p ON p.id = a.target_id AND p.is_active = 1"
        f" WHERE a.grantee_id IN ({marks(grantee_ids)}) AND a.kind = 'project'"
        " AND a.is_active = 1 AND (a.is_admin = 1 OR json_extract(a.permissions, ?) = 1)"
    )
    return [str(row[0]) for row in conn.execute(sql, (*grantee_ids, flag))]


# -- what accounts hold --------------------------------------------------------------------
def holdings(conn: Tx, org_id: str, account_ids: Sequence[str]) -> list[tuple[str, bool, Access]]:
    """Access held by these accounts: (holder, through a role?, access), directly or
    through the active roles they hold. Bounded by what those accounts hold, never by
    what the caller holds.

    Three single-table queries rather than one join: SQLite spends tens of microseconds
    setting up a self-join of `access` even when it finds nothing, and most accounts
    hold no role, which makes the last two queries unnecessary."""
    ids = tuple(account_ids)
    if not ids:
        return []
    where = f"access.org_id = ? AND access.grantee_id IN ({marks(ids)})"
    direct = records(
        conn, ACCESS, f"SELECT {ACCESS.select} FROM access WHERE {where}", (org_id, *ids)
    )
    out = [(a.grantee_id, False, a) for a in direct]
    held: dict[str, list[str]] = {}
    for a in direct:
        if a.kind == "role" and a.is_active:
            held.setdefault(a.target_id, []).append(a.grantee_id)
    if not held:
        return out
    roles = tuple(held)
    active = conn.execute(
        f"SELECT id FROM roles WHERE id IN ({marks(roles)}) AND is_active = 1", roles
    )
    live = tuple(str(r[0]) for r in active)
    if not live:
        return out
    where = f"access.grantee_id IN ({marks(live)}) AND access.is_active = 1"
    for grant in records(conn, ACCESS, f"SELECT {ACCESS.select} FROM access WHERE {where}", live):
        out.extend((holder, True, grant) for holder in held[grant.grantee_id])
    return out


def target_states(
    conn: Tx, project_ids: Sequence[str], group_ids: Sequence[str]
) -> dict[str, tuple[bool, str]]:
    """Whether each project or group is active, and a group's project ('' for none)."""
    parts: list[str] = []
    params: list[str] = []
    if project_ids:
        parts.append(f"SELECT id, is_active, '' FROM projects WHERE id IN ({marks(project_ids)})")
        params.extend(project_ids)
    if group_ids:
        parts.append(
            "SELECT id, is_active, coalesce(project_id, '') FROM groups"
            f" WHERE id IN ({marks(group_ids)})"
        )
        params.extend(group_ids)
    if not parts:
        return {}
    rows = conn.execute(" UNION ALL ".join(parts), tuple(params))
    return {str(r[0]): (bool(r[1]), str(r[2])) for r in rows}


def grantees_of(conn: Tx, target_id: str) -> list[Access]:
    return records(
        conn, ACCESS, f"SELECT {ACCESS.select} FROM access WHERE target_id = ?", (target_id,)
    )


def holders_of_role(conn: Tx, role_id: str) -> list[str]:
    rows = conn.execute(
        "SELECT grantee_id FROM access WHERE kind = 'role' AND target_id = ?", (role_id,)
    )
    return [str(r[0]) for r in rows]


def count_roles_held(conn: Tx, account_id: str) -> int:
    """How many roles an account holds (active or not)."""
    found = scalar(
        conn, "SELECT count(*) FROM access WHERE kind = 'role' AND grantee_id = ?", (account_id,)
    )
    return int(found or 0)


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
    codec=ACCESS,
)
