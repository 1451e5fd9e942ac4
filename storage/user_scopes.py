"""SQL conditions that narrow a list of accounts: who the caller may see, and membership
filters.

Each builder returns a condition on an account table (`users` by default, or `devices`:
both hold accounts that are granted access the same way) and its bound parameters, to
be ANDed into the list engine's scope. IDs always travel as parameters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from storage import accounts

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


def in_org(org_id: str, table: str = "users") -> Clause:
    return f"{table}.org_id = ?", (org_id,)


def in_home_project(project_id: str, table: str = "users") -> Clause:
    return f"{table}.project_id = ?", (project_id,)


def member_of_group(group_id: str, is_admin: bool | None = None, table: str = "users") -> Clause:
    admin = "" if is_admin is None else " AND is_admin = ?"
    params = (group_id,) if is_admin is None else (group_id, is_admin)
    sql = f"{table}.id IN ({_ACTIVE_ACCESS.format(kind='group')} AND target_id = ?{admin})"
    return sql, params


def member_of_project(project_id: str, table: str = "users") -> Clause:
    sql = (
        f"{table}.project_id = ? OR {table}.id IN"
        f" ({_ACTIVE_ACCESS.format(kind='project')} AND target_id = ?)"
    )
    return sql, (project_id, project_id)


def holds_role(role_id: str, table: str = "users") -> Clause:
    return f"{table}.id IN ({_ACTIVE_ACCESS.format(kind='role')} AND target_id = ?)", (role_id,)


def project_admin(project_id: str, wanted: bool, table: str = "users") -> Clause:
    return f"{accounts.is_project_admin(table)} = ?", (project_id, wanted)


def not_admins(table: str = "users") -> Clause:
    """Leave out org admins and project admins (of any project), direct or through roles."""
    return (
        f"NOT {accounts.is_org_admin(table)} AND NOT {accounts.is_any_project_admin(table)}",
        (),
    )


def search(
    text: str, fts_columns: Sequence[str], json_columns: Sequence[str], table: str = "users"
) -> Clause:
    """Every word must match: as a prefix in one of the FTS columns, or inside a value of
    one of the JSON columns (custom attributes, which FTS does not index)."""
    terms = re.findall(r"\w+", text)
    if not terms:
        return "0", ()
    out = Conditions()
    for term in terms:
        out.add(_term(term, fts_columns, json_columns, table))
    return out.sql()


def _term(term: str, fts_columns: Sequence[str], json_columns: Sequence[str], table: str) -> Clause:
    options: list[str] = []
    params: list[Any] = []
    if fts_columns:
        match = '"' + term.replace('"', '""') + '"*'
        options.append(
            f"{table}.rowid IN (SELECT rowid FROM {table}_fts WHERE {table}_fts MATCH ?)"
        )
        params.append("{" + " ".join(fts_columns) + "} : " + match)
    for column in json_columns:
        options.append(
            f"EXISTS (SELECT 1 FROM json_tree({table}.{column}) t"
            " WHERE t.type IN ('text', 'integer', 'real') AND instr(lower(t.atom), lower(?)) > 0)"
        )
        params.append(term)
    return " OR ".join(options) or "0", tuple(params)
