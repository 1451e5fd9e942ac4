"""0029: the certificate registry gains status, reason, fingerprint and not_before. A
certificate in force stays active; one ended before (revoked_date set) becomes
superseded, or revoked when its device had been deleted (no key works: restored from the
trash); not_before takes the issue date (#32)."""

from __future__ import annotations

from pathlib import Path

import apsw

from storage import migrate
from storage.pragmas import configure

T = "2026-01-01T00:00:00.000000Z"


def _device(conn: apsw.Connection, device_id: str, key_hash: str | None) -> None:
    conn.execute(
        "INSERT INTO devices (id, org_id, name, name_folded, api_key_hash,"
        " api_key_last_changed, mqtt_credentials_last_changed, created_date,"
        " last_updated_date) VALUES (?1, 'org0000000000001', ?1, ?1, ?2, ?3, ?3, ?3, ?3)",
        (device_id, key_hash, T),
    )


def _certificate(conn: apsw.Connection, serial: str, device_id: str, ended: bool) -> None:
    conn.execute(
        "INSERT INTO device_certificates (serial, device_id, issued_date, not_after,"
        " revoked_date) VALUES (?, ?, ?, '2027-01-01T00:00:00.000000Z', ?)",
        (serial, device_id, T, T if ended else None),
    )


def test_0029_gives_every_certificate_its_status(tmp_path: Path) -> None:
    db = tmp_path / "edge.db"
    migrate.apply_pending(db, upto=26)
    conn = apsw.Connection(str(db))
    configure(conn, writer=True)
    conn.execute(
        "INSERT INTO orgs (id, name, name_folded, created_date, last_updated_date)"
        " VALUES ('org0000000000001', 'Org', 'org', ?1, ?1)",
        (T,),
    )
    _device(conn, "kept", "hash")
    _device(conn, "restored", None)
    _certificate(conn, "a1", "kept", ended=False)
    _certificate(conn, "a2", "kept", ended=True)
    _certificate(conn, "b1", "restored", ended=True)
    conn.close()
    assert "0029_certificates.sql" in migrate.apply_pending(db)
    conn = apsw.Connection(str(db))
    try:
        rows = conn.execute(
            "SELECT serial, status, reason, not_before, fingerprint FROM device_certificates"
            " ORDER BY serial"
        ).fetchall()
    finally:
        conn.close()
    assert rows == [
        ("a1", "active", None, T, ""),
        ("a2", "superseded", "superseded", T, ""),
        ("b1", "revoked", "cessation_of_operation", T, ""),
    ]
