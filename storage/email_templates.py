"""E-mail templates of an org and its projects."""

from __future__ import annotations

from typing import Any

import apsw

from storage.listing import Field, Table, common_fields, org_and_projects
from storage.rows import Row, insert, many, one, update


def create(conn: apsw.Connection, values: Row) -> None:
    insert(conn, "email_templates", values)


def get(conn: apsw.Connection, template_id: str) -> Row | None:
    return one(conn, "SELECT * FROM email_templates WHERE id = ?", (template_id,))


def patch(conn: apsw.Connection, template_id: str, values: Row) -> bool:
    return update(conn, "email_templates", "id", template_id, values) == 1


def delete(conn: apsw.Connection, template_id: str) -> bool:
    conn.execute("DELETE FROM email_templates WHERE id = ?", (template_id,))
    return conn.changes() == 1


def candidates(conn: apsw.Connection, org_id: str, project_id: str | None, flag: str) -> list[Row]:
    """Active templates for one purpose (`flag`): the project's first, then the org's."""
    if flag not in ("for_account_recovery", "for_new_users"):
        raise ValueError(flag)
    return many(
        conn,
        f"SELECT * FROM email_templates WHERE org_id = ? AND is_active = 1 AND {flag} = 1"
        " AND (project_id IS NULL OR project_id = ?)"
        " ORDER BY project_id IS NULL, created_date, id",
        (org_id, project_id),
    )


def context(conn: apsw.Connection, org_id: str, project_id: str | None) -> tuple[Row, Row | None]:
    """The org and project rows a message mentions (names, default locales)."""
    org = one(conn, "SELECT id, name, settings FROM orgs WHERE id = ?", (org_id,)) or {}
    project = None
    if project_id:
        project = one(
            conn,
            "SELECT id, name, settings FROM projects WHERE id = ? AND org_id = ?",
            (project_id, org_id),
        )
    return org, project


def user(conn: apsw.Connection, user_id: str) -> Row | None:
    return one(conn, "SELECT * FROM users WHERE id = ?", (user_id,))


def _column(kind: str, name: str, sortable: bool = True, folded: bool = False) -> Field:
    return Field(
        kind,
        f"email_templates.{name}",
        sortable,
        f"email_templates.{name}_folded" if folded else None,
    )


LIST = Table(
    "email_templates",
    {
        **common_fields("email_templates"),
        "name": _column("text", "name", folded=True),
        "description": _column("text", "description"),
        "subject": _column("text", "subject"),
        "from_address": _column("text", "from_address"),
        "locale": _column("text", "locale"),
        "project_id": _column("id", "project_id"),
        "for_account_recovery": _column("bool", "for_account_recovery"),
        "for_new_users": _column("bool", "for_new_users"),
    },
    fts="email_templates_fts",
    fts_columns=("name", "description", "subject", "tags"),
)


def visible(
    org_id: str, project_scope: str | None, projects: list[str] | None
) -> tuple[str, tuple[Any, ...]]:
    """List scope: storage/listing.py `org_and_projects`."""
    return org_and_projects("email_templates", org_id, project_scope, projects)
