"""A user row as the interface shows it to one caller.

Three shapes, matching the public SDK's models: the anonymous account (id, username,
dates) when the org hides personal information from non-admins; the user; and the
admin's view, which adds `has_temporary_password`, `new_password_required` and
`is_active`. Fields the caller may not view are omitted, and so are unset values.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from edge.access import values as access_values
from edge.access.engine import Caller
from edge.access.holdings import Holdings
from edge.accounts.standing import Relation, may_view
from storage.records import Access, User

Row = dict[str, Any]
OPTIONAL = (
    "picture",
    "password_last_changed",
    "phone_number",
    "pending_phone_number",
    "nickname",
    "first_name",
    "middle_name",
    "last_name",
    "preferred_mfa",
    "project_id",
    "created_by",
    "last_updated_by",
)
ADMIN_ONLY = ("has_temporary_password", "new_password_required", "is_active")


@dataclass(frozen=True)
class View:
    """The context of a response: the project and group it is about, and its kind."""

    project_id: str | None = None
    group_id: str | None = None
    pii_admin_only: bool = False
    single: bool = False


def anonymous(row: User) -> Row:
    return {
        "id": row.id,
        "username": row.username,
        "created_date": row.created_date,
        "last_updated_date": row.last_updated_date,
        "is_delete_protected": row.is_delete_protected,
    }


def present(
    grants: Caller,
    row: User,
    held: Holdings,
    rel: Relation,
    view: View,
    extra: Row | None = None,
) -> Row:
    """`extra` holds what was looked up apart: `last_seen`, and the picture on a single GET."""
    if view.pii_admin_only and not (rel.is_self or rel.admin):
        return anonymous(row)
    out = {**anonymous(row), **_profile(row)}
    out.update({n: getattr(row, n) for n in OPTIONAL if getattr(row, n) is not None})
    if rel.admin:
        out.update({name: bool(getattr(row, name)) for name in ADMIN_ONLY})
    out["is_org_admin"] = held.is_org_admin
    if rel.is_self or rel.admin:
        out["org_permissions"] = permissions("org", held.org_access)
    if view.project_id:
        out["is_project_admin"] = view.project_id in held.admin_projects
        if rel.is_self or rel.admin:
            access = held.project_access.get(view.project_id)
            out["project_permissions"] = permissions("project", access)
    if view.group_id:
        access = held.group_access.get(view.group_id)
        out["is_group_admin"] = bool(access and access.is_admin and access.is_active)
    out.update(_holdings(grants, rel, held, view))
    out.update(_extra(extra or {}))
    return out


def _profile(row: User) -> Row:
    return {
        "email": row.email,
        "locale": row.locale,
        "zoneinfo": row.zoneinfo,
        "tags": row.tags,
        "custom_attributes": row.custom_attributes,
        "restricted_custom_attributes": row.restricted_custom_attributes,
        "mfa_enabled": row.sms_mfa_enabled or row.software_mfa_enabled,
        "sms_mfa_enabled": row.sms_mfa_enabled,
        "software_mfa_enabled": row.software_mfa_enabled,
        "phone_number_verified": row.phone_number_verified,
    }


def _holdings(grants: Caller, rel: Relation, held: Holdings, view: View) -> Row:
    out: Row = {}
    if may_view(grants, rel, "role"):
        out["role_ids"] = list(held.role_ids)
    if view.single and may_view(grants, rel, "project"):
        out["project_ids"] = held.member_projects
    if view.single and may_view(grants, rel, "group"):
        out["group_ids"] = held.member_groups
    return out


def _extra(extra: Row) -> Row:
    out: Row = {}
    if extra.get("last_seen"):
        out["last_seen"] = extra["last_seen"]
    picture = extra.get("picture")
    if picture is not None:
        out["picture_base64"] = base64.b64encode(picture["data"]).decode()
        out["picture_content_type"] = picture["content_type"]
    return out


def permissions(kind: str, access: Access | None) -> Row:
    """An access object's permissions (all false when the user holds none)."""
    return access_values.level_permissions(access, kind)
