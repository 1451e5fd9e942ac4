"""Pieces of writing devices: the new row, its defaults, its name, its owner, and the
credentials written with it."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from edge import clock, ids
from edge.errors import Conflict, Denied, ValidationError
from edge.ops.ca import ClientCredentials
from storage import device_certificates as certificates
from storage import devices as store
from storage import users as user_store
from storage.records import Device, DeviceCertificate, Org, Project
from storage.rows import Tx

Row = dict[str, Any]

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
DEVICE_COLUMNS = tuple(f.name for f in fields(Device))


class NameTaken(Conflict):
    def __init__(self) -> None:
        super().__init__("name: is already used by another device of this organization")


def new_device(org_id: str, actor: str, values: Row) -> Device:
    """A Device from the given columns, with the defaults above and fresh stamps."""
    now = clock.now_iso()
    row: Row = {
        **DEVICE_DEFAULTS,
        "id": ids.new_id(),
        "org_id": org_id,
        "api_key_last_changed": now,
        "mqtt_credentials_last_changed": now,
        "created_date": now,
        "created_by": actor,
        "last_updated_date": now,
        "last_updated_by": actor,
        **values,
    }
    row["name_folded"] = row["name"].casefold()
    return Device(**{name: row[name] for name in DEVICE_COLUMNS})


def defaults(org: Org, project: Project | None) -> Row:
    """A new device's locale and delete protection, from the org (a project may override)."""
    settings = dict(org.settings)
    if project is not None:
        settings.update(project.settings)
    return {
        "locale": settings.get("default_locale") or "en-US",
        "is_delete_protected": bool(settings.get("device_delete_protection_on_by_default", False)),
    }


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


def certificate_row(device_id: str, issued: ClientCredentials) -> DeviceCertificate:
    return DeviceCertificate(
        issued.serial, device_id, clock.now_iso(), clock.iso(issued.not_after), None
    )


def replace_certificate(conn: Tx, device_id: str, issued: ClientCredentials) -> None:
    """Revoke what the device held and register the new certificate, in one transaction."""
    now = clock.now_iso()
    certificates.revoke_all(conn, device_id, now)
    certificates.register(conn, certificate_row(device_id, issued))
    store.patch(conn, device_id, {"mqtt_credentials_last_changed": now})
