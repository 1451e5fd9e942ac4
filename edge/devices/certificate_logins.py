"""A device's client certificate as its credential, on every listener that takes one
(MQTT over TLS and WSS, and HTTPS: embedded_broker/authentication.py, api/routing.py).

A certificate counts when the site CA signed it, it is within its dates, the registry
holds its serial in force (not superseded, not revoked) and its device is active. The
answer is cached by the certificate's SHA-256 fingerprint, so a client presenting the same
certificate again costs a hash and a lookup, not a signature check and two queries. The
cache is cleared whenever the auth epoch moves, which migration 0009's triggers move when
a certificate is superseded or revoked, or its device suspended, moved or deleted: a
revoked certificate is refused at once, in this process and in any other. Refusals are not
cached (a serial is registered before its certificate is handed out)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from edge.certificates.ca import SiteCa, fingerprint_of, serial_of
from edge.devices.last_seen import LastSeen
from edge.kernel import clock
from edge.kernel.errors import Unauthenticated
from edge.kernel.principal import Principal
from storage import device_certificates as registry
from storage import devices as store
from storage import epochs
from storage.database import Database
from storage.records import Device

REFUSED = "Client certificate not accepted"
MAX_CACHED = 50_000  # certificates remembered at once; past it the cache starts over


@dataclass(frozen=True)
class Accepted:
    device: Device
    serial: str
    not_before: dt.datetime
    not_after: dt.datetime


class CertificateLogins:
    def __init__(self, db: Database, ca: SiteCa, last_seen: LastSeen) -> None:
        self._db = db
        self._ca = ca
        self._last_seen = last_seen
        self._known: dict[str, Accepted] = {}
        self._epoch = -1

    def accepted(self, certificate_der: bytes) -> Accepted | None:
        """The device and serial of a certificate that counts now, else None."""
        self._sync()
        fingerprint = fingerprint_of(certificate_der)
        hit = self._known.get(fingerprint)
        if hit is None:
            hit = self._look_up(certificate_der)
            if hit is None:
                return None
            if len(self._known) >= MAX_CACHED:
                self._known.clear()
            self._known[fingerprint] = hit
        return hit if hit.not_before <= clock.now() <= hit.not_after else None

    def principal(self, certificate_der: bytes) -> Principal:
        """The device's principal (an HTTPS request), or Unauthenticated."""
        found = self.accepted(certificate_der)
        if found is None:
            raise Unauthenticated(REFUSED)
        self._last_seen.seen(found.device.id)
        return Principal("device", found.device.id, None, found.device.org_id)

    def in_force(self, serial: str) -> Device | None:
        """The active device whose certificate in force has this serial."""
        issued = self._db.read(lambda c: registry.get(c, serial))
        if issued is None or not issued.in_force:
            return None
        device = self._db.read(lambda c: store.get(c, issued.device_id))
        return device if device is not None and device.is_active else None

    def _look_up(self, certificate_der: bytes) -> Accepted | None:
        cert = self._ca.issued(certificate_der)
        if cert is None:
            return None
        serial = serial_of(cert)
        device = self.in_force(serial)
        if device is None:
            return None
        return Accepted(device, serial, cert.not_valid_before_utc, cert.not_valid_after_utc)

    def _sync(self) -> None:
        epoch = self._db.read_memo(epochs.KEY, epochs.read).auth
        if epoch != self._epoch:
            self._known.clear()
            self._epoch = epoch
