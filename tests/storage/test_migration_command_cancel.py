"""0038: device_commands takes the state `canceled` (docs/commands.md, "Canceling"); the
commands made before it are kept as they were, and its indexes with them (#29)."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from storage import migrate
from storage.pragmas import configure

STAMP = "2026-01-01T00:00:00.000000Z"
COLUMNS = (
    "id, org_id, device_id, name, payload, state, queued, created_date, created_by,"
    " expires_date, delivered_date, ended_date, reply_status, reply_payload"
)
BEFORE = [
    ("c1", "o", "d", "ping", '{"a": 1}', "queued", 1, STAMP, "u", STAMP, None, None, None, None),
    ("c2", "o", "d", "pong", "{}", "answered", 0, STAMP, "u", STAMP, None, STAMP, 200, '{"b":2}'),
]


def _writer(db: Path) -> apsw.Connection:
    conn = apsw.Connection(str(db))
    configure(conn, writer=True)
    return conn


def test_0038_keeps_the_commands_and_takes_canceled(tmp_path: Path) -> None:
    db = tmp_path / "edge.db"
    migrate.apply_pending(db, upto=37)
    conn = _writer(db)
    conn.execute(
        "INSERT INTO orgs (id, name, name_folded, created_date, last_updated_date)"
        " VALUES ('o', 'O', 'o', ?, ?)",
        (STAMP, STAMP),
    )
    conn.execute(
        "INSERT INTO devices (id, org_id, name, name_folded, api_key_last_changed,"
        " mqtt_credentials_last_changed, created_date, last_updated_date)"
        " VALUES ('d', 'o', 'D', 'd', ?, ?, ?, ?)",
        (STAMP, STAMP, STAMP, STAMP),
    )
    marks = ", ".join("?" * len(BEFORE[0]))
    conn.executemany(f"INSERT INTO device_commands ({COLUMNS}) VALUES ({marks})", BEFORE)
    with pytest.raises(apsw.ConstraintError):
        conn.execute("UPDATE device_commands SET state = 'canceled' WHERE id = 'c1'")
    conn.close()
    assert "0038_command_cancel.sql" in migrate.apply_pending(db)
    conn = _writer(db)
    kept = conn.execute(f"SELECT {COLUMNS} FROM device_commands ORDER BY id").fetchall()
    assert kept == BEFORE
    conn.execute("UPDATE device_commands SET state = 'canceled' WHERE id = 'c1'")
    indexes = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'device_commands'"
            " AND sql IS NOT NULL"
        )
    }
    assert indexes == {
        "device_commands_by_device",
        "device_commands_queued",
        "device_commands_ended",
    }
    conn.execute("DELETE FROM devices WHERE id = 'd'")  # a device's commands go with it
    assert conn.execute("SELECT count(*) FROM device_commands").fetchone() == (0,)
    conn.close()
