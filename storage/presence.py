"""Who is online: the device_presence table (one row per device that has connected).

A device is online while `connected_since` is set. The broker's process writes a row when
a device's first connection opens and when its last one closes (edge/devices/presence.py);
the list filter `is_online` reads it inside the list's own query (`online_scope`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from storage.access import marks
from storage.listing import Scope
from storage.rows import Tx

# A device deleted for good meanwhile (its sessions end as it goes) has no row to write.
_KNOWN = "WHERE EXISTS (SELECT 1 FROM devices WHERE id = ?)"


@dataclass(frozen=True, slots=True)
class PresenceRow:
    device_id: str
    connected_since: str | None
    last_disconnect_date: str | None
    last_disconnect_reason: str | None


def online(conn: Tx, device_id: str, since: str) -> None:
    conn.execute(
        f"INSERT INTO device_presence (device_id, connected_since) SELECT ?, ? {_KNOWN}"
        " ON CONFLICT (device_id) DO UPDATE SET connected_since = excluded.connected_since",
        (device_id, since, device_id),
    )


def offline(conn: Tx, device_id: str, at: str, reason: str) -> None:
    conn.execute(
        "INSERT INTO device_presence (device_id, last_disconnect_date, last_disconnect_reason)"
        f" SELECT ?, ?, ? {_KNOWN} ON CONFLICT (device_id) DO UPDATE SET connected_since = NULL,"
        " last_disconnect_date = excluded.last_disconnect_date,"
        " last_disconnect_reason = excluded.last_disconnect_reason",
        (device_id, at, reason, device_id),
    )


def all_offline(conn: Tx, at: str, reason: str) -> int:
    """Every device still marked online (the server stopped, or was killed, meanwhile) is
    offline now, for `reason`; returns how many were."""
    conn.execute(
        "UPDATE device_presence SET connected_since = NULL, last_disconnect_date = ?,"
        " last_disconnect_reason = ? WHERE connected_since IS NOT NULL",
        (at, reason),
    )
    return conn.changes()


def of(conn: Tx, device_ids: Sequence[str]) -> dict[str, PresenceRow]:
    """The rows of these devices (one query for a page of devices)."""
    if not device_ids:
        return {}
    sql = (
        "SELECT device_id, connected_since, last_disconnect_date, last_disconnect_reason"
        f" FROM device_presence WHERE device_id IN ({marks(device_ids)})"
    )
    return {str(row[0]): PresenceRow(*row) for row in conn.execute(sql, tuple(device_ids))}


def online_scope(wanted: bool, table: str = "devices") -> Scope:
    """The list condition `is_online = wanted`, for the list's own query."""
    inside = "IN" if wanted else "NOT IN"
    sql = (
        f"{table}.id {inside} (SELECT device_id FROM device_presence"
        " WHERE connected_since IS NOT NULL)"
    )
    return Scope(sql)
