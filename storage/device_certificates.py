"""The registry of client certificates issued to devices: a certificate counts only while
its serial is here and not revoked, so a reset certificate is refused even though the
site CA's signature on it is still good."""

from __future__ import annotations

from storage.records import DEVICE_CERTIFICATES, DeviceCertificate
from storage.rows import Tx, insert_record, record


def register(conn: Tx, value: DeviceCertificate) -> None:
    insert_record(conn, DEVICE_CERTIFICATES, value)


def get(conn: Tx, serial: str) -> DeviceCertificate | None:
    return record(conn, DEVICE_CERTIFICATES, "serial = ?", (serial,))


def revoke_all(conn: Tx, device_id: str, now_iso: str) -> int:
    """Revoke every certificate of a device still in force (a credentials reset)."""
    conn.execute(
        "UPDATE device_certificates SET revoked_date = ?"
        " WHERE device_id = ? AND revoked_date IS NULL",
        (now_iso, device_id),
    )
    return conn.changes()
