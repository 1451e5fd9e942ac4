"""The registry of client certificates issued to devices: a certificate counts only while
its serial is here and in force, so a superseded or revoked certificate is refused even
though the site CA's signature on it is still good. Ended ones stay for the CRL."""

from __future__ import annotations

from dataclasses import fields

from storage.records import DEVICE_CERTIFICATES, DeviceCertificate
from storage.rows import Tx, insert_record, record, records, scalar

SUPERSEDED, REVOKED = "superseded", "revoked"
KEY_COMPROMISE = "key_compromise"
_ENDED = "status <> 'active' OR revoked_date IS NOT NULL"
# The columns of a registry row, in the order of both tables (ended_certificates is its copy).
_COLUMNS = ", ".join(f.name for f in fields(DeviceCertificate))


def register(conn: Tx, value: DeviceCertificate) -> None:
    insert_record(conn, DEVICE_CERTIFICATES, value)


def get(conn: Tx, serial: str) -> DeviceCertificate | None:
    return record(conn, DEVICE_CERTIFICATES, "serial = ?", (serial,))


def of_device(conn: Tx, device_id: str, limit: int = 100) -> list[DeviceCertificate]:
    """A device's certificates, the newest first, at most `limit`."""
    return records(
        conn,
        DEVICE_CERTIFICATES,
        "SELECT * FROM device_certificates WHERE device_id = ?"
        " ORDER BY issued_date DESC, serial LIMIT ?",
        (device_id, limit),
    )


def last_issued(conn: Tx, device_id: str) -> str | None:
    """When the device's newest certificate was issued (None: it has none)."""
    found = scalar(
        conn, "SELECT max(issued_date) FROM device_certificates WHERE device_id = ?", (device_id,)
    )
    return None if found is None else str(found)


def end_all(conn: Tx, device_id: str, now_iso: str, status: str, reason: str) -> int:
    """End every certificate of a device still in force (a reset supersedes them)."""
    conn.execute(
        "UPDATE device_certificates SET revoked_date = ?, status = ?, reason = ?"
        " WHERE device_id = ? AND revoked_date IS NULL AND status = 'active'",
        (now_iso, status, reason, device_id),
    )
    return conn.changes()


def revoke(conn: Tx, serial: str, now_iso: str, reason: str) -> bool:
    """Revoke one certificate in force; False when it was not (unknown or ended). An
    ended one not yet expired may be revoked again as compromised (its key was stolen after
    a renewal superseded it): the CRL then says so."""
    conn.execute(
        "UPDATE device_certificates SET revoked_date = ?1, status = 'revoked', reason = ?2"
        " WHERE serial = ?3 AND ((revoked_date IS NULL AND status = 'active')"
        f" OR (?2 = '{KEY_COMPROMISE}' AND reason IS NOT '{KEY_COMPROMISE}'"
        f" AND ({_ENDED}) AND not_after > ?1))",
        (now_iso, reason, serial),
    )
    return conn.changes() == 1


def ended_unexpired(conn: Tx, now_iso: str) -> list[DeviceCertificate]:
    """Superseded and revoked certificates not yet past their expiry: the CRL's entries
    (an expired certificate is refused by its dates; RFC 5280 5.1.2.6 lets it go), with
    those whose rows left the registry (a device deleted or erased: migration 0033)."""
    return records(
        conn,
        DEVICE_CERTIFICATES,
        f"SELECT {_COLUMNS} FROM device_certificates WHERE ({_ENDED}) AND not_after > ?1"
        f" UNION ALL SELECT {_COLUMNS} FROM ended_certificates WHERE not_after > ?1"
        " ORDER BY serial",
        (now_iso,),
    )


def expiring(conn: Tx, now_iso: str, until_iso: str) -> list[DeviceCertificate]:
    """Certificates in force whose expiry falls between now and `until`, soonest first."""
    return records(
        conn,
        DEVICE_CERTIFICATES,
        "SELECT * FROM device_certificates WHERE status = 'active' AND revoked_date IS NULL"
        " AND not_after > ? AND not_after <= ? ORDER BY not_after, serial",
        (now_iso, until_iso),
    )


def count_expiring(conn: Tx, now_iso: str, until_iso: str) -> int:
    return int(
        scalar(
            conn,
            "SELECT count(*) FROM device_certificates WHERE status = 'active'"
            " AND revoked_date IS NULL AND not_after > ? AND not_after <= ?",
            (now_iso, until_iso),
        )
    )
