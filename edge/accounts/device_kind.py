"""The device kind: what devices have that users do not (an owner, `iot_scopes`,
descriptive fields, API keys and certificates), over the flow all accounts share
(edge/accounts/__init__.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields as columns_of
from typing import Any

from edge.access.engine import Caller
from edge.accounts import rules, views, writes
from edge.accounts.kind import Relation, Row
from edge.certificates.ca import Issued
from edge.devices.topics import normalize_scopes
from edge.kernel import clock, fields
from edge.kernel.errors import Conflict, Denied, ValidationError
from storage import device_certificates as certificates
from storage import devices as store
from storage import users as user_store
from storage import visibility
from storage.listing import Scope
from storage.records import Device, DeviceCertificate
from storage.rows import Tx

TABLE = store.LIST
# What the anonymous view shows: the only fields non-admins may filter or sort by when
# the org hides personal information.
ANONYMOUS_FIELDS = {"id", "name", "created_date", "last_updated_date", "is_delete_protected"}
DESCRIPTIVE = ("manufacturer", "product", "site", "serial_number", "mac_address")
# A new device's columns when neither the request nor the org says otherwise.
DEVICE_DEFAULTS: Row = {
    "project_id": None,
    "owner_id": None,
    "manufacturer": None,
    "product": None,
    "site": None,
    "serial_number": None,
    "mac_address": None,
    "locale": "en-US",
    "zoneinfo": "UTC",
    "picture": None,
    "tags": [],
    "custom_attributes": {},
    "restricted_custom_attributes": {},
    "iot_scopes": {},
    "is_active": True,
    "is_delete_protected": False,
}
DEVICE_COLUMNS = tuple(f.name for f in columns_of(Device))

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
    listing = TABLE
    private = "device details"

    def login(self, row: Device) -> str:
        return row.name

    def visible(self, account_id: str, grantees: Sequence[str]) -> Scope:
        """Its owner sees it too."""
        return visibility.devices(account_id, grantees)

    def hidden(self, names: set[str]) -> list[str]:
        """Everything the anonymous view does not show."""
        return sorted(names - ANONYMOUS_FIELDS)

    def fields(self, row: Device, rel: Relation, extra: Row) -> Row:
        """The device, always with `open_tunnels`: its open tunnels (`extra['tunnels']`)
        for its admins, its owner and itself (docs/tunnels.md), an empty list for others;
        the admin's view adds `is_active`. Presence (docs/presence.md): `is_online`, and
        `connected_since` and `last_disconnect_reason` when they hold a value."""
        out = _device(row)
        tunnels = extra.get("tunnels")
        if tunnels and (rel.admin or rel.is_owner or rel.is_self):
            out["open_tunnels"] = tunnels
        out.update(views.set_values(row, OPTIONAL))
        out.update(_presence(extra.get("presence")))
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


def _presence(found: Row | None) -> Row:
    if found is None:
        return {}
    return {name: value for name, value in found.items() if value is not None}


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


class NameTaken(Conflict):
    def __init__(self) -> None:
        super().__init__("name: is already used by another device of this organization")


def new_device(org_id: str, actor: str, values: Row) -> Device:
    """A Device from the given columns, with the defaults above and fresh stamps (its key
    and credentials count as issued when it is made)."""
    row = writes.new_row(org_id, actor, DEVICE_DEFAULTS, values)
    row.setdefault("api_key_last_changed", row["created_date"])
    row.setdefault("mqtt_credentials_last_changed", row["created_date"])
    row["name_folded"] = row["name"].casefold()
    return Device(**{name: row[name] for name in DEVICE_COLUMNS})


def check_name(conn: Tx, org_id: str, device_id: str, columns: Row) -> None:
    if "name_folded" in columns and store.name_taken(
        conn, org_id, device_id, columns["name_folded"]
    ):
        raise NameTaken()


def check_owner(conn: Tx, org_id: str, owner_id: Any) -> str | None:
    """`owner_id` from a body: None (no owner), or a user of this organization."""
    if owner_id is None:
        return None
    user = user_store.get(conn, owner_id) if isinstance(owner_id, str) else None
    if user is None or user.org_id != org_id:
        raise ValidationError("owner_id", "does not name a user of this organization")
    return user.id


def owner_on_create(caller_id: str, caller_kind: str, given: Any, admin: bool) -> None:
    """Whom a creator may name as owner: anyone (admins), else only themselves."""
    if given is None or admin:
        return
    if caller_kind != "user" or given != caller_id:
        raise Denied("owner_id: only admins may make someone else the owner of a device")


def record_certificate(conn: Tx, device_id: str, issued: Issued) -> None:
    """The one way a certificate the site CA issued becomes a device's, in the caller's
    transaction (a create, an enrollment, a reset, a bundle, a renewal): whatever the
    device held is superseded, the new one is registered in force (serial, fingerprint,
    validity: what every listener checks), and its MQTT credentials are marked changed."""
    now = clock.now_iso()
    certificates.end_all(conn, device_id, now, certificates.SUPERSEDED, "superseded")
    certificates.register(conn, _certificate_row(device_id, issued, now))
    store.patch(conn, device_id, {"mqtt_credentials_last_changed": now})


def _certificate_row(device_id: str, issued: Issued, now: str) -> DeviceCertificate:
    return DeviceCertificate(
        issued.serial,
        device_id,
        now,
        clock.iso(issued.not_after),
        None,
        issued.fingerprint,
        clock.iso(issued.not_before),
    )
