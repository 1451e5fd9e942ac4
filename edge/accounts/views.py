"""An account as the interface shows it to one caller.

Three shapes, matching the public SDK's models, which it tries in turn (admin, plain,
anonymous), so each carries every field its model requires:
- anonymous (AnonAccountSchema: id, `username`, dates) when the org hides personal
  information from non-admins (a device's `username` is its name);
- the account (UserSchema, DeviceSchema): the kind's own fields, then what it holds;
- the admin's view (AdminUserSchema, AdminDeviceSchema), which adds the kind's
  admin-only fields.
Fields the caller may not view are omitted, and so are unset values.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass

from edge.access import values as access_values
from edge.access.engine import Caller
from edge.access.holdings import Holdings
from edge.accounts.kind import A, Account, Kind, Relation, Row
from edge.accounts.standing import may_view


@dataclass(frozen=True)
class View:
    """The context of a response: the project and group it is about, and its kind."""

    project_id: str | None = None
    group_id: str | None = None
    pii_admin_only: bool = False
    single: bool = False


def anonymous(kind: Kind[A], row: A) -> Row:
    return {
        "id": row.id,
        "username": kind.login(row),
        "created_date": row.created_date,
        "last_updated_date": row.last_updated_date,
        "is_delete_protected": row.is_delete_protected,
    }


def present(
    grants: Caller,
    kind: Kind[A],
    row: A,
    held: Holdings,
    rel: Relation,
    view: View,
    extra: Row | None = None,
) -> Row:
    """`extra` holds what was looked up apart: `last_seen`, a user's picture on a single
    GET, a device's open tunnels."""
    if view.pii_admin_only and not (rel.is_self or rel.is_owner or rel.admin):
        return anonymous(kind, row)
    extra = extra or {}
    out = kind.fields(row, rel, extra)
    out.update(_standing(held, rel, view))
    out.update(_holdings(grants, rel, held, view))
    out.update(_extra(extra))
    return out


def set_values(row: Account, names: Sequence[str]) -> Row:
    """The named fields of the row that hold a value."""
    return {n: getattr(row, n) for n in names if getattr(row, n) is not None}


def _standing(held: Holdings, rel: Relation, view: View) -> Row:
    out: Row = {"is_org_admin": held.is_org_admin}
    if rel.is_self or rel.admin:
        out["org_permissions"] = access_values.level_permissions(held.org_access, "org")
    if view.project_id:
        out["is_project_admin"] = view.project_id in held.admin_projects
        if rel.is_self or rel.admin:
            access = held.project_access.get(view.project_id)
            out["project_permissions"] = access_values.level_permissions(access, "project")
    if view.group_id:
        access = held.group_access.get(view.group_id)
        out["is_group_admin"] = bool(access and access.is_admin and access.is_active)
    return out


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
