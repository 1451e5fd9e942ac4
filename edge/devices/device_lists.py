"""How a device list is narrowed: the rows a caller may see (decided in SQL, see
storage/visibility.py), the membership filters, the fields a caller may filter by, and
search over the full-text index and the custom attributes."""

from __future__ import annotations

from dataclasses import dataclass, replace

from edge.access.engine import Caller
from edge.errors import Denied, ValidationError
from edge.listing import ListQuery
from storage import devices as store
from storage import user_scopes as scopes
from storage import visibility

TABLE = store.LIST
SEARCHABLE = (*TABLE.fts_columns, *TABLE.json_columns)
ADMIN_FILTERS = {"is_active"}
# What the anonymous view shows: the only fields non-admins may filter or sort by when
# the org hides personal information (a filter would reveal what the response omits).
ANONYMOUS_FIELDS = {"id", "name", "created_date", "last_updated_date", "is_delete_protected"}


@dataclass(frozen=True)
class DeviceFilters:
    """The list parameters that are not columns: membership and admin status."""

    group_id: str | None = None
    project_id: str | None = None
    role_id: str | None = None
    is_group_admin: bool | None = None
    is_project_admin: bool | None = None


def scope(grants: Caller, filters: DeviceFilters) -> scopes.Conditions:
    principal, table = grants.principal, "devices"
    out = scopes.Conditions()
    out.add(scopes.in_org(principal.org_id or "", table))
    if principal.project_id:
        out.add(scopes.in_home_project(principal.project_id, table))
    if not grants.sees_all("device"):
        out.add(visibility.devices(principal.account_id, grants.grantees))
    if filters.group_id:
        out.add(scopes.member_of_group(filters.group_id, filters.is_group_admin, table))
    elif filters.is_group_admin is not None:
        raise ValidationError("is_group_admin", "applies only together with group_id")
    if filters.project_id:
        out.add(scopes.member_of_project(filters.project_id, table))
    if filters.is_project_admin is not None:
        project = filters.project_id or principal.project_id
        if not project:
            raise ValidationError(
                "is_project_admin", "applies only with project_id or in a project session"
            )
        out.add(scopes.project_admin(project, filters.is_project_admin, table))
    if filters.role_id:
        out.add(scopes.holds_role(filters.role_id, table))
    return out


def guard_query(grants: Caller, query: ListQuery, pii_hidden: bool) -> None:
    """Admin-only fields, and descriptive ones when the org hides personal information,
    are not filter keys for those who may not see them."""
    names = {f.field for f in query.filters} | {query.order_by}
    if names & ADMIN_FILTERS and not grants.is_admin_anywhere():
        raise Denied("is_active: only admins may filter or sort by it")
    if pii_hidden and not grants.is_admin_anywhere():
        hidden = sorted(names - ANONYMOUS_FIELDS)
        if hidden or query.search:
            name = hidden[0] if hidden else "search"
            raise Denied(f"{name}: only admins may search device details in this org")


def normalized(query: ListQuery, conditions: scopes.Conditions) -> ListQuery:
    """Search moves into the scope, so it can reach custom attributes, which the full-text
    index does not hold."""
    if not query.search:
        return query
    chosen = query.search_fields or SEARCHABLE
    unknown = [n for n in chosen if n not in SEARCHABLE]
    if unknown:
        raise ValidationError(
            "search_fields",
            f"'{unknown[0]}' is not searchable (choose from {', '.join(SEARCHABLE)})",
        )
    fts = [n for n in chosen if n in TABLE.fts_columns]
    json_columns = [n for n in chosen if n in TABLE.json_columns]
    conditions.add(scopes.search(query.search, fts, json_columns, "devices"))
    return replace(query, search=None, search_fields=())
