"""A device's certificates over their life (docs/provisioning.md): what the registry holds
of them, revoking one, a device renewing its own from a CSR, and the bundle an admin
fetches. The rules:

- Admins of a device (org admins, project admins of its project, its owner where the
  project makes owners admins) list its certificates, revoke one, and fetch its bundle
  (which issues a new key pair and certificate: the server keeps no private key).
- A device renews its own certificate, authenticated by that certificate or its API key:
  the site CA signs the key of its CSR (the rules of every CSR, edge/certificates/
  issuing.py; a subject naming any but the device's own ID names another device), the
  one it held is superseded at once, and its MQTT connections made with it are checked
  again (the auth epoch moves). No one renews for another account, and a device renews at
  most once per `device_certificate_renewal_seconds` after its last certificate (a 429).
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from edge.accounts.device_kind import record_certificate
from edge.accounts.devices import Devices
from edge.accounts.kind import Row
from edge.certificates import issuing, revocation
from edge.certificates.ca import Issued, SiteCa
from edge.devices import bundle
from edge.kernel import audit, clock
from edge.kernel.config import Config
from edge.kernel.errors import Conflict, Denied, NotFound, TooManyAttempts, ValidationError
from edge.kernel.principal import Principal
from storage import device_certificates as registry
from storage import devices as store
from storage.database import Database
from storage.records import AuditEvent, Device, DeviceCertificate
from storage.rows import Tx

# Reasons an admin may give for a revocation (RFC 5280 5.3.1, as the CRL says them).
REVOKE_REASONS = ("unspecified", "key_compromise", "affiliation_changed", "cessation_of_operation")


class DeviceCertificates:
    def __init__(self, db: Database, devices: Devices, ca: SiteCa, config: Config) -> None:
        self._db = db
        self._devices = devices
        self._ca = ca
        self._config = config
        self._crls = revocation.Crls(db, ca)

    def listed(self, principal: Principal, device_id: str) -> list[Row]:
        """The device's certificates, the newest first (admins of the device)."""
        device = self._admin_target(principal, device_id)
        return [view(c) for c in self._db.read(lambda c: registry.of_device(c, device.id))]

    async def revoke(self, principal: Principal, device_id: str, serial: str, reason: str) -> Row:
        """Revoke one certificate in force of the device: refused by every listener from
        now on, and on the CRL."""
        device = self._admin_target(principal, device_id)
        if reason not in REVOKE_REASONS:
            raise ValidationError("reason", f"must be one of {', '.join(REVOKE_REASONS)}")
        event = _event("certificate_revoked", principal, device, serial=serial, reason=reason)

        def write(conn: Tx) -> DeviceCertificate:
            found = registry.get(conn, serial.lower())
            if found is None or found.device_id != device.id:
                raise NotFound("Certificate not found")
            if not registry.revoke(conn, found.serial, clock.now_iso(), reason):
                raise Conflict(f"the certificate is already {found.status}")
            revoked = registry.get(conn, found.serial)
            assert revoked is not None
            return revoked

        return view(await self._db.write(audit.along(write, event)))

    async def renew(self, principal: Principal, csr: issuing.Sent) -> Issued:
        """The calling device's new certificate for the key of its CSR."""
        if principal.kind != "device":
            raise Denied("Only a device renews its own certificate")
        device = self._db.read(lambda c: store.get(c, principal.account_id))
        if device is None or not device.is_active:
            raise NotFound("Device not found")
        self._not_too_soon(device.id)
        key = issuing.checked(csr, lambda name: name != device.id)  # only its own ID
        issued = self._ca.sign_client(key, device.id, device.org_id)
        event = _event("certificate_renewed", principal, device, serial=issued.serial)
        await self._db.write(audit.along(lambda c: record_certificate(c, device.id, issued), event))
        return issued

    async def bundle(self, principal: Principal, device_id: str) -> tuple[Device, Row]:
        """New MQTT credentials for the bundle (admins of the device), as a reset makes."""
        device = self._admin_target(principal, device_id)
        bundle.require_tls_listener(self._config)  # told only to those who may have it
        if not device.is_active:
            raise Conflict("the device is suspended: reactivate it (is_active) first")
        reset = self._devices.event("certificate_reset", principal, device)
        return device, await self._devices.reissue(device, reset)

    def crl(self) -> bytes:
        return self._crls.current()

    def _not_too_soon(self, device_id: str) -> None:
        """A device renews at most once per `device_certificate_renewal_seconds` after its
        last certificate: each is a registry row and, superseded, a CRL entry until it
        expires, so a device renewing in a loop would grow both without bound."""
        interval = self._config.device_certificate_renewal_seconds
        last = self._db.read(lambda c: registry.last_issued(c, device_id))
        if not interval or last is None:
            return
        wait = interval - (clock.now() - clock.parse(last)).total_seconds()
        if wait > 0:
            raise TooManyAttempts(
                f"This device's certificate was issued less than {interval} seconds ago;"
                " renew it later",
                math.ceil(wait),
            )

    def _admin_target(self, principal: Principal, device_id: str) -> Device:
        target = self._devices.target(principal, device_id)
        if not target.rel.admin:
            self._devices.require(target, "read")  # a 404 when it is not even in sight
            raise Denied("Only admins of the device may manage its certificates")
        return target.account


def view(row: DeviceCertificate) -> dict[str, Any]:
    """A registry row as the API shows it (the registry holds no key). A row ended before
    its status was recorded (a trash snapshot older than migration 0029) shows `revoked`."""
    shown = asdict(row)
    if row.status == "active" and not row.in_force:
        shown["status"] = registry.REVOKED
    return shown


def _event(action: str, actor: Principal, device: Device, **details: str) -> AuditEvent:
    return audit.event(
        f"device_{action}",
        actor,
        org_id=device.org_id,
        target=("device", device.id),
        details=details,
    )
