"""A device as the interface shows it to one caller.

Three shapes, matching the public SDK's models, which it tries in turn (admin, plain,
anonymous), so each carries every field its model requires:
- anonymous (AnonAccountSchema: id, `username` = the device name, dates) when the org
  hides personal information from non-admins;
- the device (DeviceSchema), always with `open_tunnels` (its open tunnels for its admins,
  its owner and itself; an empty list for others) and its `iot_scopes`;
- the admin's view (AdminDeviceSchema), which adds `is_active`.
Fields the caller may not view are omitted, and so are unset values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edge.access import values as access_values
from edge.access.engine import Caller
from edge.access.holdings import Holdings
from edge.accounts.standing import Relation, may_view
from storage.records import Device

Row = dict[str, Any]
OPTIONAL = (
    "manufacturer",
    "product",
    "site",
    "serial_number",
    "mac_address",
    "picture",
    "project_id",
    "owner_id",
    "created_by",
    "last_updated_by",
)


@dataclass(frozen=True)
class View:
    """The context of a response: the project and group it is about, and its kind."""

    project_id: str | None = None
    group_id: str | None = None
    pii_admin_only: bool = False
    single: bool = False


def anonymous(row: Device) -> Row:
    return {
        "id": row.id,
        "username": row.name,
        "created_date": row.created_date,
        "last_updated_date": row.last_updated_date,
        "is_delete_protected": row.is_delete_protected,
    }


def present(
    grants: Caller,
    row: Device,
    held: Holdings,
    rel: Relation,
    view: View,
    last_seen: str | None = None,
    tunnels: list[Row] | None = None,
) -> Row:
    """`tunnels`: the device's open tunnels (Tunnel views), shown to its admins, its owner
    and the device itself (docs/tunnels.md); others see `open_tunnels: []`."""
    if view.pii_admin_only and not (rel.is_self or rel.is_owner or rel.admin):
        return anonymous(row)
    out = _device(row)
    if tunnels and (rel.admin or rel.is_owner or rel.is_self):
        out["open_tunnels"] = tunnels
    out.update({n: getattr(row, n) for n in OPTIONAL if getattr(row, n) is not None})
    if rel.admin:
        out["is_active"] = row.is_active
    out["is_org_admin"] = held.is_org_admin
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
    out.update(_holdings(grants, rel, held, view))
    if last_seen:
        out["last_seen"] = last_seen
    return out


def _device(row: Device) -> Row:
    return {
        "id": row.id,
        "name": row.name,
        "locale": row.locale,
        "zoneinfo": row.zoneinfo,
        "created_date": row.created_date,
        "last_updated_date": row.last_updated_date,
        "tags": row.tags,
        "open_tunnels": [],
        "custom_attributes": row.custom_attributes,
        "restricted_custom_attributes": row.restricted_custom_attributes,
        "iot_scopes": row.iot_scopes,
        "is_delete_protected": row.is_delete_protected,
        "api_key_last_changed": row.api_key_last_changed,
        "mqtt_credentials_last_changed": row.mqtt_credentials_last_changed,
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
