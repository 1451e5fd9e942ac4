"""The twin service: read and update a device's twin, who may, and what follows an
update (docs/twins.md).

Who may: reading, those who may read the device; `desired`, those who may update it (its
admins, its owner where the org's settings make owners admins, `device_permissions`
with `can_update`), but not the device itself; `reported`, the device itself alone (its
API key over HTTP, or its own MQTT session, edge/twins/topics.py). A device the caller
cannot see is a 404, one it sees but may not change that way a 403.

An update is read, checked (its expected version, the limits) and written in one write
transaction, so two updates never both apply to the same version; it is durable before
anyone is told: the caller's answer, the device's delta (sent when `desired` changed and
still differs from `reported`) and the change hook all come after the commit.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from edge.accounts.devices import Devices
from edge.devices.topics import Notify
from edge.kernel import audit, clock
from edge.kernel.errors import Conflict, Denied, NotFound, SchemaError, ValidationError
from edge.kernel.events import Hook
from edge.kernel.principal import Principal
from edge.twins import document, topics
from edge.twins.document import SECTIONS, JsonObject, Limits
from storage import twins as store
from storage.database import Database
from storage.records import AuditEvent, Device
from storage.records import Twin as Twin  # the record its callers hand back (api/twins.py)
from storage.rows import Tx

log = logging.getLogger("edge.twins")
Row = dict[str, Any]
FIELDS = frozenset({*SECTIONS, "version", "client_token"})
MAX_CLIENT_TOKEN = topics.MAX_CLIENT_TOKEN


@dataclass(frozen=True)
class TwinChanged:
    """An accepted update, told after its commit on `Twins.changes`: the device and its
    twin as it now is (the live changes, #30, carry it on)."""

    device: Device
    twin: Twin

    def __repr__(self) -> str:
        """What a failing listener's log line shows: never the document's values."""
        return f"TwinChanged(device={self.device.id!r}, version={self.twin.version})"


@dataclass(frozen=True)
class Update:
    """An update as asked: the sections' patches (a section absent is left alone) and the
    version it was made against, if the caller cares."""

    patches: Mapping[str, JsonObject | None]
    version: int | None


class Twins:
    def __init__(self, db: Database, devices: Devices, limits: Limits) -> None:
        self.db = db
        self._devices = devices
        self.limits = limits
        # How deltas reach a device; set by edge/app.py (the broker is not an edge service).
        self.notify: Notify | None = None
        self.changes: Hook[TwinChanged] = Hook("twins")

    # -- over HTTP -------------------------------------------------------------------------
    def get(self, principal: Principal, device_id: str) -> Twin:
        target = self._devices.target(principal, device_id)
        if not target.rel.read:
            raise NotFound("Device not found")
        return self.current(device_id)

    async def patch(
        self, principal: Principal, device_id: str, body: Mapping[str, Any], if_match: int | None
    ) -> Twin:
        update = parse(body)
        if if_match is not None:
            if update.version is not None and update.version != if_match:
                raise ValidationError("version", "differs from If-Match")
            update = Update(update.patches, if_match)
        target = self._devices.target(principal, device_id)
        rel = target.rel
        if not rel.read:
            raise NotFound("Device not found")
        if "desired" in update.patches and not (rel.update and not rel.is_self):
            raise Denied("Not permitted to set the desired state of this device")
        if "reported" in update.patches and not rel.is_self:
            raise Denied("Only the device itself reports its state")
        device = target.account
        return await self.apply(device, update, _audited(principal, device, update))

    # -- for the device's own MQTT session and for both ------------------------------------
    def current(self, device_id: str) -> Twin:
        found = self.db.read(lambda c: store.get(c, device_id))
        return found if found is not None else empty(device_id)

    async def apply(
        self, device: Device, update: Update, audited: AuditEvent | None = None
    ) -> Twin:
        """Check and write the update, with its audit event (`audited`, given the new
        version), then tell the device and the listeners."""
        for section, patch in update.patches.items():
            document.check_patch(section, patch, self.limits)
        now = clock.now_iso()

        def write(conn: Tx) -> Twin:
            twin = self._write(conn, device.id, update, now)
            if audited is not None:
                audit.add(conn, replace(audited, details={"version": twin.version}))
            return twin

        # `_write` reads, checks, then changes the twin by one statement: a savepoint only
        # when an audit event follows that statement.
        twin = await self.db.write(write, savepoint=audited is not None)
        log.debug("twin of device %s at version %d", device.id, twin.version)
        if "desired" in update.patches:
            self.send_delta(device, twin)
        self.changes.emit(TwinChanged(device, twin))  # a listener's fault is not the update's
        return twin

    def send_delta(self, device: Device, twin: Twin) -> None:
        """Publish the delta to the device's own sessions, if there is one."""
        difference = document.delta(twin.desired, twin.reported)
        if not difference or self.notify is None:
            return
        self.notify(device.id, topics.delta_topic(device), topics.delta_payload(twin, difference))

    def _write(self, conn: Tx, device_id: str, update: Update, now: str) -> Twin:
        exists, found = store.of_device(conn, device_id)
        if not exists:
            raise NotFound("Device not found")
        before = found or empty(device_id)
        if update.version is not None and update.version != before.version:
            raise Conflict(
                f"version: the twin is at version {before.version}, not {update.version}"
            )
        sections = {"desired": before.desired, "reported": before.reported}
        metadata = {s: before.metadata.get(s, {}) for s in SECTIONS}
        for section, patch in update.patches.items():
            sections[section] = {} if patch is None else document.merge(sections[section], patch)
            metadata[section] = _stamp(metadata[section], patch, now)
        document.check_size(sections["desired"], sections["reported"], self.limits)
        desired, reported = sections["desired"], sections["reported"]
        twin = Twin(device_id, desired, reported, metadata, before.version + 1, now)
        store.put(conn, twin)
        return twin


def _audited(principal: Principal, device: Device, update: Update) -> AuditEvent | None:
    """A change of `desired` is audited (who, the device, the version it made; never the
    values); a device's `reported` is not (docs/audit.md says why)."""
    if "desired" not in update.patches:
        return None
    target = ("device", device.id)
    return audit.event("twin_desired_updated", principal, org_id=device.org_id, target=target)


def empty(device_id: str) -> Twin:
    """The twin of a device that never had an update."""
    return Twin(device_id, {}, {}, {"desired": {}, "reported": {}}, 0, "")


def parse(body: Mapping[str, Any]) -> Update:
    """An update's body: `desired` and/or `reported` (objects, or null to clear), an
    optional `version` and `client_token` (MQTT's; its echo is topics.py's)."""
    unknown = set(body) - FIELDS
    if unknown:
        raise SchemaError(f"{sorted(unknown)[0]}: is not a field of a twin update")
    patches = {s: body[s] for s in SECTIONS if s in body}
    if not patches:
        raise SchemaError("body: give desired or reported")
    version, token = body.get("version"), body.get("client_token")
    if isinstance(version, float) and version.is_integer():  # JSON does not tell 5.0 from 5
        version = int(version)
    if version is not None and type(version) is not int:
        raise SchemaError("version: must be an integer")
    if version is not None and version < 0:
        raise ValidationError("version", "must be 0 or more")
    if token is not None and not isinstance(token, str):
        raise SchemaError("client_token: must be a string")
    if token is not None and len(token) > MAX_CLIENT_TOKEN:
        raise ValidationError("client_token", f"must be at most {MAX_CLIENT_TOKEN} characters")
    return Update(patches, version)


def view(twin: Twin) -> Row:
    """The twin as HTTP answers it and MQTT's `get/accepted` carries it."""
    out: Row = {
        "device_id": twin.device_id,
        "desired": twin.desired,
        "reported": twin.reported,
        "delta": document.delta(twin.desired, twin.reported),
        "metadata": twin.metadata,
        "version": twin.version,
    }
    if twin.updated_date:
        out["updated_date"] = twin.updated_date
    return out


def _stamp(metadata: JsonObject, patch: JsonObject | None, now: str) -> JsonObject:
    if patch is None:  # the section is cleared, and its times with it
        return {}
    stamped = document.merge(metadata, document.stamped(patch, now))
    return stamped if isinstance(stamped, dict) else {}
