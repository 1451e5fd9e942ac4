"""0026: retained messages on reserved topics (a device namespace's `tunnels`, `commands`
and `twin`, under a root of one level or two) are deleted; every other retained message,
those that only look alike included, is kept (#29 F4)."""

from __future__ import annotations

from pathlib import Path

import apsw

from embedded_broker import acl
from storage import migrate
from storage.pragmas import configure

RESERVED = [
    "org/devices/d1/commands/evil",
    "org/devices/d1/commands",
    "org/devices/d1/twin/update/delta",
    "org/devices/d1/twin/update",
    "org/devices/d1/tunnels",
    "org/proj/devices/d1/tunnels/t1",
    "org/proj/devices/d1/twin/get/accepted",
]
KEPT = [
    "org/devices/d1/status",
    "org/devices/d1/commandsx",
    "org/devices/d1/x/commands/evil",  # below the namespace's own level, not reserved
    "org/sensors/twin",
    "org/proj/sub/devices/d1/twin",  # three levels of root: no namespace
    "org/Devices/d1/twin/update",
    "devices",
]


def test_0026_deletes_retained_messages_on_reserved_topics_only(tmp_path: Path) -> None:
    db = tmp_path / "edge.db"
    migrate.apply_pending(db, upto=24)
    conn = apsw.Connection(str(db))
    configure(conn, writer=True)
    for topic in RESERVED + KEPT:
        conn.execute(
            "INSERT INTO mqtt_retained (topic, payload, qos, updated_at, account_id)"
            " VALUES (?, x'7b7d', 1, '2026-01-01T00:00:00Z', NULL)",
            (topic,),
        )
    conn.close()
    assert "0026_reserved_retained.sql" in migrate.apply_pending(db)
    conn = apsw.Connection(str(db))
    try:
        left = {row[0] for row in conn.execute("SELECT topic FROM mqtt_retained")}
    finally:
        conn.close()
    assert left == set(KEPT)


def test_the_migration_deletes_what_the_broker_calls_reserved() -> None:
    """The same topics as the broker's table (embedded_broker/acl.py), which skips them."""
    assert all(acl.reserved_owner(topic) is not None for topic in RESERVED)
    assert all(acl.reserved_owner(topic) is None for topic in KEPT)
