"""Devices of an organization: create, read, list, update, suspend, delete, and reset
their API key or MQTT credentials.

The flow every account shares is edge/accounts/service.py, and what a device has of its
own (owner, name, descriptive fields, `iot_scopes`, the view's fields) is
edge/accounts/device_kind.py. Here, the rules of docs/devices.md: only admins set
`iot_scopes`, restricted attributes and `is_active` (a device may deactivate itself); only
admins or the current owner change the owner; owners are admins when the setting says
so; a new device gets its API key and certificate, and loses them when deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from edge.access import holdings
from edge.access.engine import Caller, Permissions
from edge.access.holdings import Holdings
from edge.accounts import device_kind as kind
from edge.accounts.device_kind import DEVICE, owns
from edge.accounts.kind import Relation, Row
from edge.accounts.service import Accounts, Memo, require_admin_fields
from edge.accounts.standing import relation
from edge.accounts.views import View
from edge.certificates.ca import SiteCa
from edge.devices import credentials
from edge.devices.credentials import Endpoints
from edge.devices.keys import DeviceKeys
from edge.devices.presence import Presence
from edge.kernel import audit, clock
from edge.kernel.errors import Conflict, Denied, NotFound, ValidationError
from edge.kernel.listing import CursorCodec
from edge.kernel.principal import Principal
from edge.tenancy import settings
from edge.tenancy.orgs import Orgs
from edge.tenancy.trash import Trash
from storage import devices as store
from storage.database import Database
from storage.records import AuditEvent, Device
from storage.rows import Tx

ADMIN_ONLY = ("restricted_custom_attributes", "is_active", "iot_scopes")
APART = {"project_permissions", "owner_id"}  # changed with the device in sight, not updated
OWNERS_ARE_ADMINS = "device_owners_have_admin_access"
CREATORS_ARE_OWNERS = "device_creators_are_owners_by_default"


# The open tunnels of each of these devices, shaped as Tunnels (edge/tunnels/views.py
# `open_for`): the tunnels room stands above accounts, so the composition root hands it in.
OpenTunnels = Callable[[list[str]], dict[str, list[Row]]]


class Devices(Accounts[Device]):
    def __init__(
        self,
        db: Database,
        cursors: CursorCodec,
        orgs: Orgs,
        permissions: Permissions,
        trash: Trash,
        ca: SiteCa,
        endpoints: Endpoints,
        keys: DeviceKeys,
        presence: Presence,
        open_tunnels: OpenTunnels,
    ) -> None:
        super().__init__(db, cursors, orgs, permissions, trash, DEVICE)
        self.presence = presence
        self._ca = ca
        self._endpoints = endpoints
        self._keys = keys
        self._open_tunnels = open_tunnels

    # -- what the device kind supplies ---------------------------------------------------
    def _found(self, device_id: str, org_id: str | None) -> tuple[Device, Holdings] | None:
        device = self._row(device_id, org_id)
        if device is None:
            return None
        return device, holdings.of_account(self._db, device.org_id, device_id)

    def _row(self, device_id: str, org_id: str | None) -> Device | None:
        device = self._db.read(lambda c: store.get(c, device_id))
        return device if device is not None and device.org_id == org_id else None

    def _relation(self, grants: Caller, device: Device, held: Holdings, memo: Memo) -> Relation:
        """The setting that makes owners admins is read only when the caller is the owner."""
        owner_admin = False
        owner = owns(grants, device)
        if owner:
            if device.project_id not in memo:
                memo[device.project_id] = bool(self._setting(device, OWNERS_ARE_ADMINS))
            owner_admin = memo[device.project_id]
        return relation(grants, DEVICE, device, held, owner=owner, owner_admin=owner_admin)

    def _extras(self, account_ids: list[str]) -> dict[str, Row]:
        """Its last activity, its open tunnels and whether it is online
        (edge/accounts/device_kind.py `fields`)."""
        seen = self._db.read(lambda c: store.last_seen(c, account_ids))
        tunnels = self._open_tunnels(account_ids)
        online = self.presence.views(account_ids)
        return {
            i: {"last_seen": seen.get(i), "tunnels": tunnels.get(i), "presence": online[i]}
            for i in account_ids
        }

    def _setting(self, device: Device, name: str) -> Any:
        return settings.effective(self._db, device.org_id, device.project_id, name)

    # -- reading -------------------------------------------------------------------------
    def get(self, principal: Principal, device_id: str) -> Row:
        target = self.target(principal, device_id)
        self.require(target, "read")
        view = View(principal.project_id, None, target.grants.pii_admin_only(), single=True)
        extra = self._extras([device_id])[device_id]
        return self.present(target.grants, target.account, target.held, target.rel, view, extra)

    # -- writing -------------------------------------------------------------------------
    async def create(self, principal: Principal, body: dict[str, Any]) -> Row:
        """A new device and its credentials (NewDeviceSchema), shown this once."""
        creation = self.creating(principal, body)
        grants, org, project_id = creation.grants, creation.org, creation.project_id
        admin = grants.is_project_admin(project_id)
        require_admin_fields(body, admin, ADMIN_ONLY)
        changes = self.access_changes(grants, body, project_id, org.id)
        columns = kind.columns(body)
        if "name" not in columns:
            raise ValidationError("name", "is required")
        owner_given = "owner_id" in body
        kind.owner_on_create(principal.account_id, principal.kind, body.get("owner_id"), admin)
        key, key_hash = credentials.new_api_key()
        values = {
            **creation.defaults,
            **columns,
            "project_id": project_id,
            "api_key_hash": key_hash,
        }
        row = kind.new_device(org.id, principal.actor, values)
        if not owner_given and principal.kind == "user" and self._setting(row, CREATORS_ARE_OWNERS):
            row = replace(row, owner_id=principal.account_id)
        issued = self._ca.issue_client(row.id, org.id)

        def write(conn: Tx) -> Device:
            made = row
            if owner_given:
                made = replace(row, owner_id=kind.check_owner(conn, org.id, body["owner_id"]))
            kind.check_name(conn, org.id, made.id, columns)
            store.create(conn, made)
            kind.record_certificate(conn, made.id, issued)
            self.write_access(conn, made, principal.actor, changes)
            return made

        created = self.event("created", principal, row, _as_set(body, columns))
        made = await self._db.write(audit.along(write, created))
        return credentials.new_device_info(made, key, issued, self._endpoints)

    async def patch(self, principal: Principal, device_id: str, body: dict[str, Any]) -> None:
        target = self.target(principal, device_id)
        device, rel = target.account, target.rel
        self.check_reach(target, body, APART)
        if "owner_id" in body and not (rel.admin or rel.is_owner):
            raise Denied("owner_id: only admins or the device's owner may change it")
        require_admin_fields(body, rel.admin, ("restricted_custom_attributes", "iot_scopes"))
        _check_suspension(body, rel)
        changes = self.project_access(principal, target, body)
        columns = kind.columns(body)
        if columns or "owner_id" in body:
            columns.update(last_updated_date=clock.now_iso(), last_updated_by=principal.actor)

        def write(conn: Tx) -> None:
            if "owner_id" in body:
                columns["owner_id"] = kind.check_owner(conn, device.org_id, body["owner_id"])
            kind.check_name(conn, device.org_id, device_id, columns)
            if columns and not store.patch(conn, device_id, columns):
                raise NotFound("Device not found")
            self.write_access(conn, device, principal.actor, changes)

        updated = self.event("updated", principal, device, _as_set(body, columns))
        await self._db.write(audit.along(write, updated))

    async def delete(
        self, principal: Principal, device_id: str, *, force: bool, permanent: bool
    ) -> None:
        """As every account's; its API key and certificates end at once."""
        await super().delete(principal, device_id, force=force, permanent=permanent)
        self._keys.forget([device_id])

    async def reset_api_key(self, principal: Principal, device_id: str) -> Row:
        """A new key (NewApiKey); the old one stops working at once, on HTTP and MQTT."""
        target = self.target(principal, device_id)
        self.require(target, "update")
        key, key_hash = credentials.new_api_key()
        changes: dict[str, object] = {
            "api_key_hash": key_hash,
            "api_key_last_changed": clock.now_iso(),
        }

        def write(conn: Tx) -> None:
            if not store.patch(conn, device_id, changes):
                raise NotFound("Device not found")

        reset = self.event("api_key_reset", principal, target.account)
        await self._db.write(audit.along(write, reset))
        self._keys.forget([device_id])
        return {"api_key": key}

    async def reset_mqtt_credentials(self, principal: Principal, device_id: str) -> Row:
        """A new key pair and certificate (NewMqttCredentials); the old certificate is
        refused by serial from now on."""
        target = self.target(principal, device_id)
        self.require(target, "update")
        reset = self.event("certificate_reset", principal, target.account)
        return await self.reissue(target.account, reset)

    async def operator_reset_mqtt_credentials(self, device_id: str) -> tuple[Device, Row]:
        """The same reset by the operator at the box (`edge device bundle`): no account
        acts, and the audit log says `operator`, as for `edge admin reset-password`."""
        device = self._db.read(lambda c: store.get(c, device_id))
        if device is None:
            raise NotFound(f"no device has the ID {device_id!r}")
        if not device.is_active:
            raise Conflict("the device is suspended: reactivate it (is_active) first")
        reset = self.event("certificate_reset", None, device, actor_kind="operator")
        return device, await self.reissue(device, reset)

    async def reissue(self, device: Device, reset: AuditEvent) -> Row:
        """A new key pair and certificate, the earlier ones superseded, with this event."""
        issued = self._ca.issue_client(device.id, device.org_id)
        await self._db.write(
            audit.along(lambda c: kind.record_certificate(c, device.id, issued), reset)
        )
        return credentials.mqtt_credentials(device, issued, self._endpoints)


def _check_suspension(body: dict[str, Any], rel: Relation) -> None:
    """Admins suspend and reactivate; a device may deactivate itself (and nothing more)."""
    if "is_active" not in body or rel.admin:
        return
    if rel.is_self and body["is_active"] is False:
        return
    raise Denied("is_active: only admins may set it (a device may deactivate itself)")


def _as_set(body: dict[str, Any], columns: dict[str, Any]) -> dict[str, Any]:
    """The body with `iot_scopes` as stored (normalized), for the audit log."""
    return {**body, "iot_scopes": columns["iot_scopes"]} if "iot_scopes" in columns else body
