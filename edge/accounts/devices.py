"""The device kind: what devices have that users do not (an owner, `iot_scopes`,
descriptive fields, API keys and certificates), over the flow all accounts share
(edge/accounts/__init__.py)."""

from __future__ import annotations

from typing import Any

from edge import fields
from edge.access.engine import Caller
from edge.accounts import rules, views
from edge.accounts.kind import Relation, Row
from edge.devices.topics import normalize_scopes
from storage.records import Device

DESCRIPTIVE = ("manufacturer", "product", "site", "serial_number", "mac_address")

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


class DeviceKind:
    name = "device"
    noun = "Device"
    admin_acts = True

    def login(self, row: Device) -> str:
        return row.name

    def fields(self, row: Device, rel: Relation, extra: Row) -> Row:
        """The device, always with `open_tunnels`: its open tunnels (`extra['tunnels']`)
        for its admins, its owner and itself (docs/tunnels.md), an empty list for others;
        the admin's view adds `is_active`."""
        out = _device(row)
        tunnels = extra.get("tunnels")
        if tunnels and (rel.admin or rel.is_owner or rel.is_self):
            out["open_tunnels"] = tunnels
        out.update(views.set_values(row, OPTIONAL))
        if rel.admin:
            out["is_active"] = row.is_active
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


def owns(grants: Caller, device: Device) -> bool:
    """Whether the caller is the device's owner (a user)."""
    me = grants.principal
    return me.kind == "user" and device.owner_id == me.account_id


def columns(body: dict[str, Any]) -> dict[str, Any]:
    """The stored columns for every device field present in the body: its name and
    descriptive fields, the fields every account has, then `iot_scopes`."""
    out: dict[str, Any] = {}
    if "name" in body:
        out["name"] = fields.text("name", body["name"])
        out["name_folded"] = out["name"].casefold()
    for name in DESCRIPTIVE:
        if name in body:
            out[name] = fields.optional_text(name, body[name])
    out.update(rules.columns(body))
    if "iot_scopes" in body:
        out["iot_scopes"] = normalize_scopes("iot_scopes", body["iot_scopes"])
    return out


DEVICE = DeviceKind()
