"""The site CA's certificate revocation list: every device certificate superseded or
revoked and not yet expired, signed by the CA, for tools that check certificates
themselves (edge's own listeners ask the registry). The CRL number is the auth epoch,
which grows with every change of a certificate's standing (migration 0009's triggers)."""

from __future__ import annotations

import datetime as dt

from cryptography import x509

from edge.certificates.ca import SiteCa
from edge.kernel import clock
from storage import credentials as auth_store
from storage import device_certificates as registry
from storage.database import Database
from storage.records import DeviceCertificate
from storage.rows import Tx

# The CRL reason of each registry reason (RFC 5280 5.3.1); anything else is unspecified.
REASONS = {
    "superseded": x509.ReasonFlags.superseded,
    "key_compromise": x509.ReasonFlags.key_compromise,
    "affiliation_changed": x509.ReasonFlags.affiliation_changed,
    "cessation_of_operation": x509.ReasonFlags.cessation_of_operation,
    "unspecified": x509.ReasonFlags.unspecified,
}


def crl(db: Database, ca: SiteCa) -> bytes:
    """The CRL as DER (`application/pkix-crl`), as of now."""
    now = clock.now_iso()

    def read(conn: Tx) -> tuple[list[DeviceCertificate], int]:
        return registry.ended_unexpired(conn, now), auth_store.auth_epoch(conn)

    ended, epoch = db.read(read)
    return ca.crl([_entry(row) for row in ended], epoch)


def _entry(row: DeviceCertificate) -> tuple[int, dt.datetime, x509.ReasonFlags]:
    when = clock.parse(row.revoked_date or row.issued_date)
    reason = REASONS.get(row.reason or "", x509.ReasonFlags.unspecified)
    return int(row.serial, 16), when, reason
