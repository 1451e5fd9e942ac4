"""Devices of an organization: create, read, list, update, suspend, delete, and reset
their API key or MQTT credentials.

Who may do what is decided by the permission engine through `edge/accounts/standing.py`
(`device_permissions` act on devices as `user_permissions` act on users); what a caller
sees by `edge/accounts/views.py`. A device the caller may not see at all is a 404;
one they may see but not change is a 403. Rules of docs/devices.md: only admins set
`iot_scopes`, restricted attributes and `is_active` (a device may deactivate itself); only
admins or the current owner change the owner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from edge import audit, clock
from edge.access import holdings
from edge.access.engine import Caller, Permissions
from edge.access.holdings import Holdings
from edge.accounts import device_kind as kind
from edge.accounts import lists, writes
from edge.accounts.device_kind import DEVICE, owns
from edge.accounts.kind import Relation
from edge.accounts.lists import Filters
from edge.accounts.standing import relation
from edge.accounts.views import View, present
from edge.devices import credentials
from edge.devices.credentials import Endpoints
from edge.devices.keys import DeviceKeys
from edge.errors import Conflict, DeleteProtected, Denied, NotFound, ValidationError
from edge.listing import CursorCodec, ListQuery, Page, fetch
from edge.ops.ca import SiteCa
from edge.principal import Principal
from edge.tenancy import settings
from edge.tenancy.orgs import Orgs
from edge.tenancy.trash import Trash
from edge.tunnels import views as tunnel_views
from storage import device_certificates as certificates
from storage import devices as store
from storage import projects as project_store
from storage.database import Database
from storage.records import AuditEvent, Device, Project
from storage.rows import Tx

Row = dict[str, Any]
Rows = list[Row]

ADMIN_ONLY = ("restricted_custom_attributes", "is_active", "iot_scopes")
OWNERS_ARE_ADMINS = "device_owners_have_admin_access"
CREATORS_ARE_OWNERS = "device_creators_are_owners_by_default"


@dataclass
class Target:
    grants: Caller
    device: Device
    held: Holdings
    rel: Relation


class Devices:
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
    ) -> None:
        self._db = db
        self.cursors = cursors
        self._orgs = orgs
        self._permissions = permissions
        self._trash = trash
        self._ca = ca
        self._endpoints = endpoints
        self._keys = keys

    # -- context -------------------------------------------------------------------------
    def grants(self, principal: Principal) -> Caller:
        if principal.org_id is None:
            raise Denied("Devices live in an organization: staff must sign in with scope=<org>")
        return self._permissions.caller(principal)

    def target(self, principal: Principal, device_id: str) -> Target:
        """The device as the caller stands towards it; 404 outside the caller's org."""
        grants = self.grants(principal)
        device = self._db.read(lambda c: store.get(c, device_id))
        if device is None or device.org_id != principal.org_id:
            raise NotFound("Device not found")
        held = holdings.of_account(self._db, device.org_id, device_id)
        return Target(grants, device, held, self._relation(grants, device, held, {}))

    def readable(self, grants: Caller, device_id: str) -> bool:
        """Whether the caller may read this device (its GET is not a 404)."""
        device = self._db.read(lambda c: store.get(c, device_id))
        if device is None or device.org_id != grants.principal.org_id:
            return False
        held = holdings.of_account(self._db, device.org_id, device_id)
        return self._relation(grants, device, held, {}).read

    def _relation(
        self, grants: Caller, device: Device, held: Holdings, memo: dict[str | None, bool]
    ) -> Relation:
        """The setting that makes owners admins is read only when the caller is the owner."""
        owner_admin = False
        owner = owns(grants, device)
        if owner:
            if device.project_id not in memo:
                memo[device.project_id] = bool(self._setting(device, OWNERS_ARE_ADMINS))
            owner_admin = memo[device.project_id]
        return relation(grants, DEVICE, device, held, owner=owner, owner_admin=owner_admin)

    def _setting(self, device: Device, name: str) -> Any:
        return settings.effective(self._db, device.org_id, device.project_id, name)

    def require(self, target: Target, action: str) -> None:
        rel = target.rel
        allowed = {"read": rel.read, "update": rel.update}.get(action, rel.delete)
        if not allowed:
            if not rel.read:
                raise NotFound("Device not found")
            raise Denied(f"Not permitted to {action} this device")

    def _project(self, org_id: str, project_id: str) -> Project | None:
        return self._db.read(lambda c: project_store.get_in_org(c, org_id, project_id))

    # -- reading -------------------------------------------------------------------------
    def get(self, principal: Principal, device_id: str) -> Row:
        target = self.target(principal, device_id)
        self.require(target, "read")
        seen = self._db.read(lambda c: store.last_seen(c, [device_id]))
        view = View(principal.project_id, None, target.grants.pii_admin_only(), single=True)
        tunnels = tunnel_views.open_for(self._db, [device_id]).get(device_id)
        extra = {"last_seen": seen.get(device_id), "tunnels": tunnels}
        return present(target.grants, DEVICE, target.device, target.held, target.rel, view, extra)

    async def list(self, principal: Principal, query: ListQuery, filters: Filters) -> Page:
        grants = self.grants(principal)
        pii = grants.pii_admin_only()
        lists.guard_query(grants, DEVICE, query, pii)
        conditions = lists.scope(grants, DEVICE, filters)
        query = lists.normalized(DEVICE, query, conditions)
        sql, params = conditions.sql()
        page = await fetch(self._db, DEVICE.listing, query, sql, params)
        view = View(filters.project_id or principal.project_id, filters.group_id, pii)
        page.rows = self._present_page(grants, page.rows, view)
        return page

    def _present_page(self, grants: Caller, rows: Sequence[Device], view: View) -> Rows:
        if not rows:
            return []
        org_id, ids = rows[0].org_id, [r.id for r in rows]
        held = holdings.of_accounts(self._db, org_id, ids)
        seen = self._db.read(lambda c: store.last_seen(c, ids))
        tunnels = tunnel_views.open_for(self._db, ids)
        memo: dict[str | None, bool] = {}
        out = []
        for row in rows:
            rel = self._relation(grants, row, held[row.id], memo)
            extra = {"last_seen": seen.get(row.id), "tunnels": tunnels.get(row.id)}
            out.append(present(grants, DEVICE, row, held[row.id], rel, view, extra))
        return out

    # -- writing -------------------------------------------------------------------------
    async def create(self, principal: Principal, body: dict[str, Any]) -> Row:
        """A new device and its credentials (NewDeviceSchema), shown this once."""
        grants = self.grants(principal)
        org = self._orgs.get_row(principal.org_id or "")
        project = self._home_project(principal, body.get("project_id"))
        project_id = project.id if project else None
        grants.require("device", "create", project_id=project_id)
        admin = grants.is_project_admin(project_id)
        _require_admin_fields(body, admin, ADMIN_ONLY)
        changes = writes.access_changes(grants, body, project_id, org.id, DEVICE.name)
        columns = kind.columns(body)
        if "name" not in columns:
            raise ValidationError("name", "is required")
        owner_given = "owner_id" in body
        kind.owner_on_create(principal.account_id, principal.kind, body.get("owner_id"), admin)
        key, key_hash = credentials.new_api_key()
        defaults = writes.defaults(org, project, DEVICE.name)
        values = {**defaults, **columns, "project_id": project_id}
        row = kind.new_device(org.id, principal.actor, {**values, "api_key_hash": key_hash})
        if not owner_given and principal.kind == "user" and self._setting(row, CREATORS_ARE_OWNERS):
            row = replace(row, owner_id=principal.account_id)
        issued = self._ca.issue_client(row.id, org.id)

        def write(conn: Tx) -> Device:
            made = row
            if owner_given:
                made = replace(row, owner_id=kind.check_owner(conn, org.id, body["owner_id"]))
            kind.check_name(conn, org.id, made.id, columns)
            store.create(conn, made)
            certificates.register(conn, kind.certificate_row(made.id, issued))
            for change in changes:
                writes.write_access(conn, org.id, made.id, DEVICE.name, principal.actor, change)
            return made

        created = _event("device_created", principal, row, _as_set(body, columns))
        made = await self._db.write(audit.along(write, created))
        return credentials.new_device_info(made, key, issued, self._endpoints)

    async def patch(self, principal: Principal, device_id: str, body: dict[str, Any]) -> None:
        target = self.target(principal, device_id)
        device, rel = target.device, target.rel
        if set(body) - {"project_permissions", "owner_id"} or not body:
            self.require(target, "update")
        if "owner_id" in body or "project_permissions" in body:  # never out of sight
            self.require(target, "read")
        if "owner_id" in body:
            if not (rel.admin or rel.is_owner):
                raise Denied("owner_id: only admins or the device's owner may change it")
        _require_admin_fields(body, rel.admin, ("restricted_custom_attributes", "iot_scopes"))
        _check_suspension(body, rel)
        project_id = device.project_id
        changes = writes.access_changes(target.grants, body, project_id, device.org_id, DEVICE.name)
        columns = kind.columns(body)
        if columns or "owner_id" in body:
            columns.update(last_updated_date=clock.now_iso(), last_updated_by=principal.actor)

        def write(conn: Tx) -> None:
            if "owner_id" in body:
                columns["owner_id"] = kind.check_owner(conn, device.org_id, body["owner_id"])
            kind.check_name(conn, device.org_id, device_id, columns)
            if columns and not store.patch(conn, device_id, columns):
                raise NotFound("Device not found")
            for change in changes:
                writes.write_access(
                    conn, device.org_id, device_id, DEVICE.name, principal.actor, change
                )

        updated = _event("device_updated", principal, device, _as_set(body, columns))
        await self._db.write(audit.along(write, updated))

    async def delete(
        self, principal: Principal, device_id: str, *, force: bool, permanent: bool
    ) -> None:
        """To the trash unless `permanent`; its API key and certificates end at once."""
        target = self.target(principal, device_id)
        self.require(target, "delete")
        if force and not target.rel.admin:
            raise Denied("force: only admins may force a delete")
        if target.device.is_delete_protected and not force:
            raise DeleteProtected("Device")
        await self._trash.delete(principal, "device", target.device, permanent=permanent)
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

        reset = _event("device_api_key_reset", principal, target.device)
        await self._db.write(audit.along(write, reset))
        self._keys.forget([device_id])
        return {"api_key": key}

    async def reset_mqtt_credentials(self, principal: Principal, device_id: str) -> Row:
        """A new key pair and certificate (NewMqttCredentials); the old certificate is
        refused by serial from now on."""
        target = self.target(principal, device_id)
        self.require(target, "update")
        reset = _event("device_certificate_reset", principal, target.device)
        return await self._reset_mqtt(target.device, reset)

    async def operator_reset_mqtt_credentials(self, device_id: str) -> tuple[Device, Row]:
        """The same reset by the operator at the box (`edge device bundle`): no account
        acts, and the audit log says `operator`, as for `edge admin reset-password`."""
        device = self._db.read(lambda c: store.get(c, device_id))
        if device is None:
            raise NotFound(f"no device has the ID {device_id!r}")
        if not device.is_active:
            raise Conflict("the device is suspended: reactivate it (is_active) first")
        reset = audit.event(
            "device_certificate_reset",
            None,
            org_id=device.org_id,
            target=("device", device.id),
            actor_kind="operator",
        )
        return device, await self._reset_mqtt(device, reset)

    async def _reset_mqtt(self, device: Device, reset: AuditEvent) -> Row:
        issued = self._ca.issue_client(device.id, device.org_id)
        await self._db.write(
            audit.along(lambda c: kind.replace_certificate(c, device.id, issued), reset)
        )
        return credentials.mqtt_credentials(device, issued, self._endpoints)

    def _home_project(self, principal: Principal, given: Any) -> Project | None:
        """The project a new device is created in: the session's, or `project_id` if given."""
        if principal.project_id and given not in (None, principal.project_id):
            raise ValidationError("project_id", "must be the project of this session")
        project_id = principal.project_id or given
        if project_id is None:
            return None
        project = self._project(principal.org_id or "", project_id)
        if project is None or not project.is_active:
            raise ValidationError("project_id", "does not name an active project of this org")
        return project


def _require_admin_fields(body: dict[str, Any], is_admin: bool, names: Sequence[str]) -> None:
    for name in names:
        if name in body and not is_admin:
            raise Denied(f"{name}: only admins may set it")


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


def _event(
    action: str, principal: Principal, device: Device, body: dict[str, Any] | None = None
) -> AuditEvent:
    """What was done to a device; for a create or update, which fields were sent and the
    values that change its standing (edge/audit.py `changed_fields`)."""
    target = ("device", device.id)
    details = audit.changed_fields(body) if body is not None else None
    return audit.event(action, principal, org_id=device.org_id, target=target, details=details)
