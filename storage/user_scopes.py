"""SQL conditions that narrow a user list: who the caller may see, and membership filters.

Each builder returns a condition on the `users` table and its bound parameters, to be
ANDed into the list engine's scope. IDs always travel as parameters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from storage.users import IS_ANY_PROJECT_ADMIN, IS_ORG_ADMIN, IS_PROJECT_ADMIN

Clause = tuple[str, tuple[Any, ...]]
_ACTIVE_ACCESS = "SELECT grantee_id FROM access WHERE kind = '{kind}' AND is_active = 1"


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


@dataclass
class Conditions:
    clauses: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)

    def add(self, clause: Clause) -> None:
        self.clauses.append(f"({clause[0]})")
        self.params.extend(clause[1])

    def sql(self) -> Clause:
        return " AND ".join(self.clauses) or "1", tuple(self.params)


def in_org(org_id: str) -> Clause:
    return "users.org_id = ?", (org_id,)


def in_home_project(project_id: str) -> Clause:
    return "users.project_id = ?", (project_id,)


def member_of_group(group_id: str, is_admin: bool | None = None) -> Clause:
    admin = "" if is_admin is None else " AND is_admin = ?"
    params = (group_id,) if is_admin is None else (group_id, is_admin)
    sql = f"users.id IN ({_ACTIVE_ACCESS.format(kind='group')} AND target_id = ?{admin})"
    return sql, params


def member_of_project(project_id: str) -> Clause:
    sql = (
        f"users.project_id = ? OR users.id IN"
        f" ({_ACTIVE_ACCESS.format(kind='project')} AND target_id = ?)"
    )
    return sql, (project_id, project_id)


def holds_role(role_id: str) -> Clause:
    return f"users.id IN ({_ACTIVE_ACCESS.format(kind='role')} AND target_id = ?)", (role_id,)


def project_admin(project_id: str, wanted: bool) -> Clause:
    return f"{IS_PROJECT_ADMIN} = ?", (project_id, wanted)


def not_admins() -> Clause:
    """Leave out org admins and project admins (of any project), direct or through roles."""
    return f"NOT {IS_ORG_ADMIN} AND NOT {IS_ANY_PROJECT_ADMIN}", ()


def search(text: str, fts_columns: Sequence[str], json_columns: Sequence[str]) -> Clause:
    """Every word must match: as a prefix in one of the FTS columns, or inside a value of
    one of the JSON columns (custom attributes, which FTS does not index)."""
    terms = re.findall(r"\w+", text)
    if not terms:
        return "0", ()
    out = Conditions()
    for term in terms:
        out.add(_term(term, fts_columns, json_columns))
    return out.sql()


def _term(term: str, fts_columns: Sequence[str], json_columns: Sequence[str]) -> Clause:
    options: list[str] = []
    params: list[Any] = []
    if fts_columns:
        match = '"' + term.replace('"', '""') + '"*'
        options.append("users.rowid IN (SELECT rowid FROM users_fts WHERE users_fts MATCH ?)")
        params.append("{" + " ".join(fts_columns) + "} : " + match)
    for column in json_columns:
        options.append(
            f"EXISTS (SELECT 1 FROM json_tree(users.{column}) t"
            " WHERE t.type IN ('text', 'integer', 'real') AND instr(lower(t.atom), lower(?)) > 0)"
        )
        params.append(term)
    return " OR ".join(options) or "0", tuple(params)
