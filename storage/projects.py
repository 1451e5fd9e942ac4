"""Projects: the second level of a tenant, and the questions sign-in asks about them."""

from __future__ import annotations

from collections.abc import Iterable

from storage.access import bump_epoch
from storage.listing import Field, Scope, Table, common_fields
from storage.records import PROJECTS, USERS, Project, User
from storage.rows import Tx, insert_record, one, record, records, update_record

# The SQL that a login field compares a folded login with, per field.
LOGIN_COLUMNS = {
    "username": "username_folded",
    "email": "email_folded",
    "phone_number": "phone_folded",
}
_MEMBERS = "org_id = :org AND (project_id IS NULL OR project_id = :project)"


def create(conn: Tx, value: Project) -> None:
    insert_record(conn, PROJECTS, value)


def get(conn: Tx, project_id: str) -> Project | None:
    return record(conn, PROJECTS, "id = ?", (project_id,))


def get_in_org(conn: Tx, org_id: str, project_id: str) -> Project | None:
    return record(conn, PROJECTS, "id = ? AND org_id = ?", (project_id, org_id))


def name_taken(conn: Tx, org_id: str, name_folded: str, project_id: str) -> bool:
    row = one(
        conn,
        "SELECT 1 AS hit FROM projects WHERE org_id = ? AND name_folded = ? AND id != ?",
        (org_id, name_folded, project_id),
    )
    return row is not None


def patch(conn: Tx, project_id: str, changes: dict[str, object]) -> bool:
    """Callers keep their session project's settings (edge/access/engine.py): a change
    ends them."""
    bump_epoch(conn)
    return update_record(conn, PROJECTS, project_id, changes)


def delete(conn: Tx, project_id: str) -> bool:
    """Delete a project; its groups, roles, users and access go with it (keys and triggers)."""
    conn.execute("DELETE FROM projects WHERE id = ?", (project_id,))
    return conn.changes() == 1


def end_sessions(conn: Tx, project_id: str) -> None:
    """Revoke every session signed in to the project (it was deleted or suspended)."""
    conn.execute("UPDATE sessions SET revoked = 1 WHERE project_id = ?", (project_id,))


def account_project(conn: Tx, account_id: str) -> tuple[bool, str | None]:
    """(found, project_id) of a user, device or role: the project it belongs to, None if
    org-level."""
    row = one(
        conn,
        "SELECT project_id FROM users WHERE id = ?1 UNION ALL"
        " SELECT project_id FROM devices WHERE id = ?1 UNION ALL"
        " SELECT project_id FROM roles WHERE id = ?1",
        (account_id,),
    )
    return (False, None) if row is None else (True, row["project_id"])


def login_matches(
    conn: Tx,
    org_id: str,
    project_id: str | None,
    login_fields: Iterable[str],
    folded: str,
    phone: str,
) -> dict[str, list[User]]:
    """The users a login may name, per matching field: in a project, its own and org-level
    users; at org level (project_id None), every user of the org."""
    members = "org_id = :org" if project_id is None else _MEMBERS
    found: dict[str, list[User]] = {}
    for name in login_fields:
        column = LOGIN_COLUMNS[name]
        value = phone if name == "phone_number" else folded
        rows = records(
            conn,
            USERS,
            f"SELECT {USERS.select} FROM users WHERE {members} AND {column} = :value LIMIT 2",
            {"org": org_id, "project": project_id, "value": value},
        )
        if rows:
            found[name] = rows
    return found


def ambiguous_login(conn: Tx, org_id: str, project_id: str, login_fields: Iterable[str]) -> bool:
    """Whether one login value names two accounts the project may sign in, on these fields."""
    parts = [
        f"SELECT {LOGIN_COLUMNS[name]} AS value, id FROM users"
        f" WHERE {_MEMBERS} AND {LOGIN_COLUMNS[name]} IS NOT NULL"
        for name in login_fields
    ]
    if not parts:
        return False
    row = one(
        conn,
        f"SELECT value FROM ({' UNION ALL '.join(parts)})"
        " GROUP BY value HAVING count(DISTINCT id) > 1 LIMIT 1",
        {"org": org_id, "project": project_id},
    )
    return row is not None


def in_org(org_id: str, only: str | None = None) -> Scope:
    """List scope: the org's projects, or just one of them (a project-scoped session)."""
    if only is None:
        return Scope("projects.org_id = ?", (org_id,))
    return Scope("projects.org_id = ? AND projects.id = ?", (org_id, only))


def _column(kind: str, name: str, folded: bool = False) -> Field:
    sql = f"projects.{name}"
    return Field(kind, sql, True, f"{sql}_folded" if folded else None, not_null=folded)


LIST = Table(
    "projects",
    {
        **common_fields("projects"),
        "name": _column("text", "name", folded=True),
        "alias": _column("text", "alias"),
        "description": _column("text", "description"),
    },
    fts="projects_fts",
    fts_columns=("name", "alias", "description", "tags"),
    codec=PROJECTS,
)
