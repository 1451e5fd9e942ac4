"""0022: device twins. An installation at 0021 keeps its devices; each then has the empty
twin (no row) until its first update; a twin row holds only valid JSON and a version of 1
or more, and goes when its device is deleted."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from edge.accounts.device_kind import new_device
from storage import devices as device_store
from storage import migrate
from storage import twins as store
from storage.pragmas import configure
from storage.records import Twin

NOW = "2026-11-27T12:00:00.000000Z"


def _connect(db: Path) -> apsw.Connection:
    conn = apsw.Connection(str(db))
    configure(conn, writer=True)
    return conn


def test_0022_keeps_devices_and_holds_their_twins(tmp_path: Path) -> None:
    db = tmp_path / "edge.db"
    migrate.apply_pending(db, upto=21)
    conn = _connect(db)
    conn.execute(
        "INSERT INTO orgs (id, name, name_folded, created_date, last_updated_date)"
        " VALUES ('org0000000000001', 'Kept', 'kept', ?1, ?1)",
        (NOW,),
    )
    device = new_device(
        "org0000000000001",
        "",
        {"name": "pump", "api_key_hash": "h", "created_by": None, "last_updated_by": None},
    )
    device_store.create(conn, device)
    conn.close()
    assert migrate.apply_pending(db) == [m.name for m in migrate.available()[21:]]
    conn = _connect(db)
    try:
        assert device_store.get(conn, device.id) == device
        assert store.get(conn, device.id) is None  # the empty twin, version 0
        twin = Twin(device.id, {"a": 1}, {}, {"desired": {"a": NOW}, "reported": {}}, 1, NOW)
        store.put(conn, twin)
        assert store.get(conn, device.id) == twin
        store.put(conn, Twin(device.id, {}, {"b": [1]}, {}, 2, NOW))  # in place
        assert store.get(conn, device.id) == Twin(device.id, {}, {"b": [1]}, {}, 2, NOW)
        for bad in ("UPDATE device_twins SET desired = '{'", "UPDATE device_twins SET version = 0"):
            with pytest.raises(apsw.ConstraintError):
                conn.execute(bad)
        conn.execute("DELETE FROM devices WHERE id = ?", (device.id,))
        assert store.get(conn, device.id) is None  # went with its device
    finally:
        conn.close()
