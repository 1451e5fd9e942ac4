"""How a list of accounts is narrowed: the rows a caller may see (decided in SQL, see
storage/visibility.py), the membership filters, the fields a caller may filter by, and
search over the full-text index and the custom attributes."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from edge.access.engine import Caller
from edge.accounts.kind import Kind
from edge.kernel import fields
from edge.kernel.errors import Denied, ValidationError
from edge.kernel.listing import Filter, ListQuery
from storage import presence
from storage import user_scopes as scopes
from storage.listing import Scope

ADMIN_FILTERS = {"is_active"}


@dataclass(frozen=True)
class Filters:
    """The list parameters that are not columns: membership and admin status
    (`exclude_admins`: the users' list only), and presence (`is_online`: the devices')."""

    group_id: str | None = None
    project_id: str | None = None
    role_id: str | None = None
    is_group_admin: bool | None = None
    is_project_admin: bool | None = None
    exclude_admins: bool = False
    is_online: bool | None = None  # the devices' list only (docs/presence.md)


def scope(grants: Caller, kind: Kind[Any], filters: Filters) -> Scope:
    principal, table = grants.principal, kind.listing.name
    out = scopes.in_org(principal.org_id or "", table)
    if principal.project_id:
        out &= scopes.in_home_project(principal.project_id, table)
    if not grants.sees_all(kind.name):
        out &= kind.visible(principal.account_id, grants.grantees)
    out = _membership(principal.project_id, filters, out, table)
    if filters.is_online is not None:
        out &= presence.online_scope(filters.is_online, table)
    if filters.exclude_admins and (filters.group_id or filters.project_id):
        if not grants.is_admin_anywhere():
            out &= scopes.not_admins(table)
    return out


def _membership(session_project: str | None, filters: Filters, out: Scope, table: str) -> Scope:
    if filters.group_id:
        out &= scopes.member_of_group(filters.group_id, filters.is_group_admin, table)
    elif filters.is_group_admin is not None:
        raise ValidationError("is_group_admin", "applies only together with group_id")
    if filters.project_id:
        out &= scopes.member_of_project(filters.project_id, table)
    if filters.is_project_admin is not None:
        project = filters.project_id or session_project
        if not project:
            raise ValidationError(
                "is_project_admin", "applies only with project_id or in a project session"
            )
        out &= scopes.project_admin(project, filters.is_project_admin, table)
    if filters.role_id:
        out &= scopes.holds_role(filters.role_id, table)
    return out


def guard_query(grants: Caller, kind: Kind[Any], query: ListQuery, pii_hidden: bool) -> None:
    """Admin-only fields, and what the anonymous view hides when the org hides personal
    information, are not filter keys for those who may not see them: a filter would
    reveal what the response omits."""
    names = {f.field for f in query.filters} | {query.order_by}
    if names & ADMIN_FILTERS and not grants.is_admin_anywhere():
        raise Denied("is_active: only admins may filter or sort by it")
    if pii_hidden and not grants.is_admin_anywhere():
        hidden = kind.hidden(names)
        if hidden or query.search:
            name = hidden[0] if hidden else "search"
            raise Denied(f"{name}: only admins may search {kind.private} in this org")


def normalized(kind: Kind[Any], query: ListQuery, scope: Scope) -> tuple[ListQuery, Scope]:
    """Phone filters compare cleaned numbers; search moves into the scope, so it can reach
    custom attributes, which the full-text index does not hold."""
    table = kind.listing
    searchable = (*table.fts_columns, *table.json_columns)
    chosen = query.search_fields or searchable
    unknown = [n for n in chosen if n not in searchable]
    if unknown:  # without `search` too: a misspelt field is a 400 wherever it is named
        raise ValidationError(
            "search_fields",
            f"'{unknown[0]}' is not searchable (choose from {', '.join(searchable)})",
        )
    if query.search:
        fts = [n for n in chosen if n in table.fts_columns]
        json_columns = [n for n in chosen if n in table.json_columns]
        scope &= scopes.search(query.search, fts, json_columns, table.name)
    filters = tuple(_clean_phone(f) for f in query.filters)
    return replace(query, filters=filters, search=None, search_fields=()), scope


def _clean_phone(item: Filter) -> Filter:
    if item.field == "phone_number" and item.op in ("eq", "sw", "contains"):
        return Filter(item.field, item.op, fields.clean_phone(str(item.value)))
    return item
