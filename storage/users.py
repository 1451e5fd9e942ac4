"""Accounts inside an organization: the users table, its list spec, and who holds what."""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from storage.listing import Field, Table
from storage.rows import Row, insert, many, one, update

# Roles a user holds through active role access, the role being active too.
_HELD_ROLES = (
    "SELECT ra.target_id FROM access ra JOIN roles r ON r.id = ra.target_id AND r.is_active = 1"
    " WHERE ra.kind = 'role' AND ra.is_active = 1 AND ra.grantee_id = users.id"
)
# Admin access of a kind held by the user, directly or through one of their roles.
_ADMIN_OF = (
    "EXISTS (SELECT 1 FROM access a WHERE a.kind = '{kind}' AND a.is_admin = 1"
    " AND a.is_active = 1 AND a.org_id = users.org_id{target}"
    f" AND (a.grantee_id = users.id OR a.grantee_id IN ({_HELD_ROLES})))"
)
IS_ORG_ADMIN = _ADMIN_OF.format(kind="org", target=" AND a.target_id = users.org_id")
IS_ANY_PROJECT_ADMIN = _ADMIN_OF.format(kind="project", target="")
IS_PROJECT_ADMIN = _ADMIN_OF.format(kind="project", target=" AND a.target_id = ?")
LAST_SEEN = "(SELECT max(s.created_date) FROM sessions s WHERE s.account_id = users.id)"


def create(conn: apsw.Connection, values: Row) -> None:
    insert(conn, "users", values)


def get(conn: apsw.Connection, user_id: str) -> Row | None:
    return one(conn, "SELECT * FROM users WHERE id = ?", (user_id,))


def find_by_login(conn: apsw.Connection, org_id: str, folded: str) -> Row | None:
    return one(
        conn,
        "SELECT * FROM users WHERE org_id = ?1 AND (username_folded = ?2 OR email_folded = ?2)",
        (org_id, folded),
    )


def find_by_phone(conn: apsw.Connection, org_id: str, phone: str) -> Row | None:
    """The user with this normalized phone number in the org, if any."""
    return one(conn, "SELECT * FROM users WHERE org_id = ? AND phone_folded = ?", (org_id, phone))


def taken(
    conn: apsw.Connection, org_id: str, username_folded: str, email_folded: str
) -> str | None:
    """Which of username or e-mail already belongs to someone in the org, if either."""
    row = one(
        conn,
        "SELECT username_folded, email_folded FROM users WHERE org_id = ?1"
        " AND (username_folded = ?2 OR email_folded = ?3)",
        (org_id, username_folded, email_folded),
    )
    if row is None:
        return None
    return "username" if row["username_folded"] == username_folded else "email"


def clash(
    conn: apsw.Connection,
    org_id: str,
    user_id: str,
    logins: dict[str, str],
) -> str | None:
    """The first login field ('username', 'email', 'phone_number') another user already uses.

    A username may not equal someone's e-mail nor the reverse: sign-in looks both up with
    one value, so either would make that value name two accounts.
    """
    for name, value in logins.items():
        if name == "phone_number":
            sql = "SELECT 1 FROM users WHERE org_id = ?1 AND id != ?2 AND phone_folded = ?3"
        else:
            sql = (
                "SELECT 1 FROM users WHERE org_id = ?1 AND id != ?2"
                " AND (username_folded = ?3 OR email_folded = ?3)"
            )
        if one(conn, sql, (org_id, user_id, value)) is not None:
            return name
    return None


def patch(conn: apsw.Connection, user_id: str, values: Row) -> bool:
    return update(conn, "users", "id", user_id, values) == 1


def delete(conn: apsw.Connection, user_id: str) -> bool:
    conn.execute("DELETE FROM users WHERE id = ?", (user_id,))
    return conn.changes() == 1


def project(conn: apsw.Connection, org_id: str, project_id: str) -> Row | None:
    """A project of the org (its state and settings), for placing users in it."""
    return one(
        conn,
        "SELECT id, is_active, settings FROM projects WHERE id = ? AND org_id = ?",
        (project_id, org_id),
    )


def holdings(conn: apsw.Connection, org_id: str, user_ids: Sequence[str]) -> list[Row]:
    """Access held by these users, directly (`via_role` 0) or through active roles (1).

    Each row carries `holder` (the user), the target's state and a group's project.
    """
    marks = ", ".join("?" for _ in user_ids)
    target = (
        "coalesce(g.is_active, p.is_active, 1) AS target_active, g.project_id AS group_project_id"
        " FROM {src} LEFT JOIN groups g ON a.kind = 'group' AND g.id = a.target_id"
        " LEFT JOIN projects p ON a.kind = 'project' AND p.id = a.target_id"
    )
    direct = (
        f"SELECT a.*, a.grantee_id AS holder, 0 AS via_role, {target.format(src='access a')}"
        f" WHERE a.org_id = ? AND a.grantee_id IN ({marks})"
    )
    through = (
        "SELECT a.*, ra.grantee_id AS holder, 1 AS via_role, "
        + target.format(
            src="access ra JOIN roles r ON r.id = ra.target_id AND r.is_active = 1"
            " JOIN access a ON a.grantee_id = r.id AND a.is_active = 1"
        )
        + f" WHERE ra.org_id = ? AND ra.kind = 'role' AND ra.is_active = 1"
        f" AND ra.grantee_id IN ({marks})"
    )
    ids = tuple(user_ids)
    return many(conn, f"{direct} UNION ALL {through}", (org_id, *ids, org_id, *ids))


def last_seen(conn: apsw.Connection, user_ids: Sequence[str]) -> dict[str, str]:
    """When each of these users last signed in (sessions are kept until they expire)."""
    marks = ", ".join("?" for _ in user_ids)
    rows = many(
        conn,
        "SELECT account_id, max(created_date) AS seen FROM sessions"
        f" WHERE account_id IN ({marks}) GROUP BY account_id",
        tuple(user_ids),
    )
    return {str(r["account_id"]): str(r["seen"]) for r in rows}


def _column(kind: str, name: str, sortable: bool = True, folded: str | None = None) -> Field:
    return Field(kind, f"users.{name}", sortable, f"users.{folded}" if folded else None)


LIST = Table(
    "users",
    {
        "id": _column("id", "id"),
        "username": _column("text", "username", folded="username_folded"),
        "email": _column("text", "email", folded="email_folded"),
        "phone_number": _column("text", "phone_number", folded="phone_folded"),
        "first_name": _column("text", "first_name"),
        "middle_name": _column("text", "middle_name"),
        "last_name": _column("text", "last_name"),
        "nickname": _column("text", "nickname"),
        "locale": _column("text", "locale"),
        "zoneinfo": _column("text", "zoneinfo"),
        "tags": _column("tags", "tags", sortable=False),
        "is_active": _column("bool", "is_active"),
        "is_delete_protected": _column("bool", "is_delete_protected"),
        "sms_mfa_enabled": _column("bool", "sms_mfa_enabled"),
        "software_mfa_enabled": _column("bool", "software_mfa_enabled"),
        "mfa_enabled": Field("bool", "(users.sms_mfa_enabled OR users.software_mfa_enabled)"),
        "is_org_admin": Field("bool", IS_ORG_ADMIN),
        "last_seen": Field("datetime", LAST_SEEN),
        "created_date": _column("datetime", "created_date"),
        "created_by": _column("id", "created_by"),
        "last_updated_date": _column("datetime", "last_updated_date"),
        "last_updated_by": _column("id", "last_updated_by"),
    },
    fts="users_fts",
    fts_columns=(
        "username",
        "email",
        "first_name",
        "last_name",
        "nickname",
        "phone_number",
        "tags",
    ),
    json_columns=("custom_attributes", "restricted_custom_attributes"),
)
