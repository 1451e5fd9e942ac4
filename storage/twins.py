"""Device twins: the device_twins table, one row per device that has ever had an update
(a device without one has the empty twin at version 0; docs/twins.md)."""

from __future__ import annotations

from storage.records import TWINS, Twin
from storage.rows import Tx, record

# The device's row and its twin's in one probe: an update's write needs both (the device
# may have gone since the request was checked), and one statement less in the writer is
# one hand-over of the GIL less to the event loop.
_OF_DEVICE = (
    f"SELECT devices.id, {TWINS.select} FROM devices"
    " LEFT JOIN device_twins ON device_twins.device_id = devices.id WHERE devices.id = ?"
)

_UPSERT = (
    "INSERT INTO device_twins (device_id, desired, reported, metadata, version, updated_date)"
    " VALUES (:device_id, :desired, :reported, :metadata, :version, :updated_date)"
    " ON CONFLICT (device_id) DO UPDATE SET desired = excluded.desired,"
    " reported = excluded.reported, metadata = excluded.metadata,"
    " version = excluded.version, updated_date = excluded.updated_date"
)


def get(conn: Tx, device_id: str) -> Twin | None:
    return record(conn, TWINS, "device_id = ?", (device_id,))


def of_device(conn: Tx, device_id: str) -> tuple[bool, Twin | None]:
    """Whether the device exists (it may be in the trash or erased), and its twin if it
    has one."""
    row = conn.execute(_OF_DEVICE, (device_id,)).fetchone()
    if row is None:
        return False, None
    return True, None if row[1] is None else TWINS.decode(row[1:])


def put(conn: Tx, twin: Twin) -> None:
    """Write the twin in place of the one before (the caller read it in this transaction
    and checked its version)."""
    conn.execute(_UPSERT, TWINS.encode(twin))
