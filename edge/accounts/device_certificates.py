"""A device's certificates over their life (docs/provisioning.md): what the registry holds
of them, revoking one, a device renewing its own from a CSR, and the bundle an admin
fetches. The rules:

- Admins of a device (org admins, project admins of its project, admins of a group it
  is a member of, its owner where the project makes owners admins) list its
  certificates, revoke one, and fetch its bundle (which issues a new key pair and
  certificate: the server keeps no private key); not in a suspended org.
- A device renews its own certificate, authenticated by that certificate or its API key:
  the site CA signs the key of its CSR (the rules of every CSR, edge/certificates/
  issuing.py; a subject naming any but the device's own ID names another device), the
  one it held is superseded at once, and its MQTT connections made with it are checked
  again (the auth epoch moves). No one renews for another account, and a device renews at
  most once per `device_certificate_renewal_seconds` after its last certificate (a 429).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from edge.accounts.device_kind import record_certificate
from edge.accounts.devices import Devices
from edge.accounts.kind import Row
from edge.certificates import issuing, revocation
from edge.certificates.ca import Issued, SiteCa
from edge.devices import bundle, credentials
from edge.kernel import audit, clock
from edge.kernel.config import Config
from edge.kernel.errors import (
    Conflict,
    Denied,
    NotFound,
    TooManyAttempts,
    Unauthenticated,
    ValidationError,
)
from edge.kernel.principal import Principal
from storage import device_certificates as registry
from storage import devices as store
from storage import orgs
from storage.database import Database
from storage.records import AuditEvent, Device, DeviceCertificate
from storage.rows import Tx

# Reasons an admin may give for a revocation (RFC 5280 5.3.1, as the CRL says them).
REVOKE_REASONS = ("unspecified", "key_compromise", "affiliation_changed", "cessation_of_operation")
# A renewal whose credential ended (revoked, superseded, reset), or whose device or
# organization was suspended, while its request was under way: as if it came without one.
NOT_IN_FORCE = "The credential of this request is no longer in force"
ORG_SUSPENDED = "The device's organization is suspended: no new credentials are issued"


@dataclass(frozen=True)
class Held:
    """The credential a renewal came with: the serial of the client certificate, or the
    SHA-256 of the API key. The guard checked it before the body arrived; a renewal checks
    it again in the transaction that records the new certificate, so one revoked or reset
    while the body was on its way issues nothing."""

    serial: str | None = None
    key_hash: str | None = None

    @staticmethod
    def certificate(serial: str) -> Held:
        return Held(serial=serial.lower())

    @staticmethod
    def api_key(key: str) -> Held:
        return Held(key_hash=credentials.key_hash(key))

    def holds(self, conn: Tx, device: Device) -> bool:
        """Whether this credential is still the device's, in force, in `conn`'s view."""
        if self.key_hash is not None:
            return device.api_key_hash is not None and device.api_key_hash == self.key_hash
        found = registry.get(conn, self.serial) if self.serial is not None else None
        return found is not None and found.device_id == device.id and found.in_force


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
        now on, and on the CRL. One ended (superseded, revoked) and not yet expired may be
        revoked again with `key_compromise`, for the CRL to say so."""
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

    async def renew(self, principal: Principal, csr: issuing.Sent, held: Held) -> Issued:
        """The calling device's new certificate for the key of its CSR. Signed outside the
        write (CPU only, nothing kept); recorded only if, inside the write, the credential
        `held` is still in force, the device and its organization active, and its last
        certificate old enough: else the signed one is dropped, unknown to every listener."""
        if principal.kind != "device":
            raise Denied("Only a device renews its own certificate")
        device = self._db.read(lambda c: store.get(c, principal.account_id))
        if device is None or not device.is_active:
            raise NotFound("Device not found")
        self._db.read(lambda c: self._not_too_soon(c, device.id))  # early, before signing
        key = issuing.checked(csr, lambda name: name != device.id)  # only its own ID
        issued = self._ca.sign_client(key, device.id, device.org_id)
        event = _event("certificate_renewed", principal, device, serial=issued.serial)

        def write(conn: Tx) -> None:
            current = store.get(conn, device.id)
            if current is None or not current.is_active or not held.holds(conn, current):
                raise Unauthenticated(NOT_IN_FORCE)
            if not _org_active(conn, current.org_id):
                raise Unauthenticated(ORG_SUSPENDED)
            self._not_too_soon(conn, device.id)
            record_certificate(conn, device.id, issued)

        await self._db.write(audit.along(write, event))
        return issued

    async def bundle(self, principal: Principal, device_id: str) -> tuple[Device, Row]:
        """New MQTT credentials for the bundle (admins of the device), as a reset makes."""
        device = self._admin_target(principal, device_id)
        bundle.require_tls_listener(self._config)  # told only to those who may have it
        if not device.is_active:
            raise Conflict("the device is suspended: reactivate it (is_active) first")
        if not self._db.read(lambda c: _org_active(c, device.org_id)):
            raise Denied(ORG_SUSPENDED)
        reset = self._devices.event("certificate_reset", principal, device)
        return device, await self._devices.reissue(device, reset)

    def crl(self) -> bytes:
        return self._crls.current()

    def _not_too_soon(self, conn: Tx, device_id: str) -> None:
        """A device renews at most once per `device_certificate_renewal_seconds` after its
        last certificate: each is a registry row and, superseded, a CRL entry until it
        expires, so a device renewing in a loop would grow both without bound. Read in the
        renewal's write, so concurrent renewals see each other (one wins, the rest a 429)."""
        interval = self._config.device_certificate_renewal_seconds
        last = registry.last_issued(conn, device_id)
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


def _org_active(conn: Tx, org_id: str) -> bool:
    org = orgs.get(conn, org_id)
    return org is not None and org.is_active


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
