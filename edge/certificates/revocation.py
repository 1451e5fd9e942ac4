"""The site CA's certificate revocation list: every device certificate superseded or
revoked and not yet expired, signed by the CA, for tools that check certificates
themselves (edge's own listeners ask the registry). It is signed again when the auth epoch
moves (every change of a certificate's standing: migration 0009's triggers), or hourly.
Its CRL number is the moment it was signed, in milliseconds since 1970, and more than the
one before: RFC 5280 5.2.3 wants it to increase with every CRL, and the auth epoch (the
number it was) repeated on the hourly signing and went back with a restored backup."""

from __future__ import annotations

import datetime as dt

from cryptography import x509

from edge.certificates.ca import SiteCa
from edge.kernel import clock
from storage import credentials as auth_store
from storage import device_certificates as registry
from storage.database import Database
from storage.records import DeviceCertificate

# A CRL is signed again at least this often, well within its validity (CRL_HOURS).
REISSUE = dt.timedelta(hours=1)
# The CRL reason of each registry reason (RFC 5280 5.3.1); anything else is unspecified.
REASONS = {
    "superseded": x509.ReasonFlags.superseded,
    "key_compromise": x509.ReasonFlags.key_compromise,
    "affiliation_changed": x509.ReasonFlags.affiliation_changed,
    "cessation_of_operation": x509.ReasonFlags.cessation_of_operation,
    "unspecified": x509.ReasonFlags.unspecified,
}


class Crls:
    """The CRL, signed again only when the registry changed (the auth epoch moved) or the
    one made is REISSUE old: every fetch in between gets the same bytes (an ECDSA
    signature differs each time it is made, and costs a signing)."""

    def __init__(self, db: Database, ca: SiteCa) -> None:
        self._db = db
        self._ca = ca
        self._made: tuple[int, dt.datetime, bytes] | None = None
        self._number = 0

    def current(self) -> bytes:
        """The CRL as DER (`application/pkix-crl`)."""
        epoch = self._db.read(auth_store.auth_epoch)
        now = clock.now()
        made = self._made
        if made is None or made[0] != epoch or now - made[1] >= REISSUE:
            self._number = max(self._number + 1, number_at(now))
            made = (epoch, now, _signed(self._db, self._ca, self._number))
            self._made = made
        return made[2]


def number_at(moment: dt.datetime) -> int:
    """The CRL number of a CRL signed at this moment: its milliseconds since 1970."""
    return int(moment.timestamp() * 1000)


def _signed(db: Database, ca: SiteCa, number: int) -> bytes:
    now = clock.now_iso()
    ended = db.read(lambda c: registry.ended_unexpired(c, now))
    return ca.crl([_entry(row) for row in ended], number)


def _entry(row: DeviceCertificate) -> tuple[int, dt.datetime, x509.ReasonFlags]:
    when = clock.parse(row.revoked_date or row.issued_date)
    reason = REASONS.get(row.reason or "", x509.ReasonFlags.unspecified)
    return int(row.serial, 16), when, reason
