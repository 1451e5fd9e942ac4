"""Device twins: the device_twins table, one row per device that has ever had an update
(a device without one has the empty twin at version 0; docs/twins.md)."""

from __future__ import annotations

from storage.records import TWINS, Twin
from storage.rows import Tx, record

_UPSERT = (
    "INSERT INTO device_twins (device_id, desired, reported, metadata, version, updated_date)"
    " VALUES (:device_id, :desired, :reported, :metadata, :version, :updated_date)"
    " ON CONFLICT (device_id) DO UPDATE SET desired = excluded.desired,"
    " reported = excluded.reported, metadata = excluded.metadata,"
    " version = excluded.version, updated_date = excluded.updated_date"
)


def get(conn: Tx, device_id: str) -> Twin | None:
    return record(conn, TWINS, "device_id = ?", (device_id,))


def put(conn: Tx, twin: Twin) -> None:
    """Write the twin in place of the one before (the caller read it in this transaction
    and checked its version)."""
    conn.execute(_UPSERT, TWINS.encode(twin))
