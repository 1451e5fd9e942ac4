"""SQL conditions that narrow a list of accounts: who the caller may see, and membership
filters.

Each builder returns a `Scope` (storage/listing.py: a condition and its bound parameters)
on an account table (`users` by default, or `devices`: both hold accounts that are granted
access the same way), which the service narrows its list's scope by (`scope & other`). IDs
always travel as parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storage import accounts
from storage import search as fts
from storage.listing import NOTHING, Scope

_ACTIVE_ACCESS = "SELECT grantee_id FROM access WHERE kind = '{kind}' AND is_active = 1"


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


def in_org(org_id: str, table: str = "users") -> Scope:
    return Scope(f"{table}.org_id = ?", (org_id,))


def in_home_project(project_id: str, table: str = "users") -> Scope:
    return Scope(f"{table}.project_id = ?", (project_id,))


def member_of_group(group_id: str, is_admin: bool | None = None, table: str = "users") -> Scope:
    admin = "" if is_admin is None else " AND is_admin = ?"
    params = (group_id,) if is_admin is None else (group_id, is_admin)
    sql = f"{table}.id IN ({_ACTIVE_ACCESS.format(kind='group')} AND target_id = ?{admin})"
    return Scope(sql, params)


def member_of_project(project_id: str, table: str = "users") -> Scope:
    sql = (
        f"{table}.project_id = ? OR {table}.id IN"
        f" ({_ACTIVE_ACCESS.format(kind='project')} AND target_id = ?)"
    )
    return Scope(sql, (project_id, project_id))


def holds_role(role_id: str, table: str = "users") -> Scope:
    sql = f"{table}.id IN ({_ACTIVE_ACCESS.format(kind='role')} AND target_id = ?)"
    return Scope(sql, (role_id,))


def project_admin(project_id: str, wanted: bool, table: str = "users") -> Scope:
    return Scope(f"{accounts.is_project_admin(table)} = ?", (project_id, wanted))


def not_admins(table: str = "users") -> Scope:
    """Leave out org admins and project admins (of any project), direct or through roles."""
    return Scope(
        f"NOT {accounts.is_org_admin(table)} AND NOT {accounts.is_any_project_admin(table)}"
    )


def search(
    text: str, fts_columns: Sequence[str], json_columns: Sequence[str], table: str = "users"
) -> Scope:
    """Every word must match: as a prefix in one of the FTS columns, or inside a value of
    one of the JSON columns (custom attributes, which FTS does not index). Each word is
    looked for once (storage/search.py); without JSON columns all of them are one MATCH,
    with them each word is one (found in the index or in the values)."""
    found = fts.words(text)
    if not found:
        return NOTHING
    if not json_columns:
        return _in_index(found, fts_columns, table)
    out = _term(found[0], fts_columns, json_columns, table)
    for word in found[1:]:
        out &= _term(word, fts_columns, json_columns, table)
    return out


def _in_index(found: Sequence[str], fts_columns: Sequence[str], table: str) -> Scope:
    """Rows whose full-text index holds every word (in `fts_columns`)."""
    if not fts_columns:
        return NOTHING
    sql = f"{table}.rowid IN (SELECT rowid FROM {table}_fts WHERE {table}_fts MATCH ?)"
    return Scope(sql, (fts.match(found, fts_columns),))


def _term(word: str, fts_columns: Sequence[str], json_columns: Sequence[str], table: str) -> Scope:
    options: list[str] = []
    params: list[Any] = []
    if fts_columns:
        index = _in_index((word,), fts_columns, table)
        options.append(index.sql)
        params.extend(index.params)
    for column in json_columns:
        options.append(
            f"EXISTS (SELECT 1 FROM json_tree({table}.{column}) t"
            " WHERE t.type IN ('text', 'integer', 'real') AND instr(lower(t.atom), lower(?)) > 0)"
        )
        params.append(word)
    return Scope(" OR ".join(options) or "0", tuple(params))
