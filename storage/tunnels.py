"""Device tunnels: the tunnels table. A tunnel is open while `closed_date` is NULL and
`expires_date` lies ahead; the queries that find a tunnel by a token or list the open ones
say so themselves, so an expired tunnel needs no write to stop working."""

from __future__ import annotations

from collections.abc import Sequence

from storage.access import marks
from storage.records import TUNNELS, Tunnel
from storage.rows import Tx, insert_record, record, records, scalar

_OPEN = "closed_date IS NULL AND expires_date > ?"
_ORDER = " ORDER BY opened_date, id"


def create(conn: Tx, value: Tunnel) -> None:
    insert_record(conn, TUNNELS, value)


def get(conn: Tx, device_id: str, tunnel_id: str) -> Tunnel | None:
    """A tunnel of this device, open or not."""
    return record(conn, TUNNELS, "id = ? AND device_id = ?", (tunnel_id, device_id))


def set_device_token(conn: Tx, tunnel_id: str, device_id: str, token_hash: str, now: str) -> bool:
    """Replace the device end's token hash of an open tunnel of this device; False when
    there is none (closed, expired, another device's, or no such tunnel)."""
    conn.execute(
        f"UPDATE tunnels SET device_token_hash = ? WHERE id = ? AND device_id = ? AND {_OPEN}",
        (token_hash, tunnel_id, device_id, now),
    )
    return conn.changes() == 1


def open_by_token(conn: Tx, column: str, token_hash: str, now_iso: str) -> Tunnel | None:
    """The open tunnel, of an active device, whose client or device token (`column`) has
    this SHA-256."""
    if column not in ("client_token_hash", "device_token_hash"):
        raise ValueError(column)
    active = "device_id IN (SELECT id FROM devices WHERE is_active = 1)"
    return record(conn, TUNNELS, f"{column} = ? AND {_OPEN} AND {active}", (token_hash, now_iso))


def open_of(conn: Tx, device_ids: Sequence[str], now_iso: str, most: int) -> list[Tunnel]:
    """The open tunnels of these devices, oldest first, at most `most` a device (its
    newest), in one query for a page of devices."""
    if not device_ids:
        return []
    newest = "ROW_NUMBER() OVER (PARTITION BY device_id ORDER BY opened_date DESC, id DESC)"
    sql = (
        f"SELECT {TUNNELS.select} FROM (SELECT *, {newest} AS nth FROM tunnels"
        f" WHERE device_id IN ({marks(device_ids)}) AND {_OPEN}) AS tunnels WHERE nth <= ?{_ORDER}"
    )
    return records(conn, TUNNELS, sql, (*device_ids, now_iso, most))


def count_open(conn: Tx, device_id: str, now_iso: str) -> int:
    """How many tunnels are open to this device."""
    sql = f"SELECT count(*) FROM tunnels WHERE device_id = ? AND {_OPEN}"
    return int(scalar(conn, sql, (device_id, now_iso)))


def still_open(conn: Tx, tunnel_ids: Sequence[str], now_iso: str) -> set[str]:
    """Which of these tunnels are open, on an active device (the relay's watch)."""
    if not tunnel_ids:
        return set()
    sql = (
        f"SELECT t.id FROM tunnels t JOIN devices d ON d.id = t.device_id"
        f" WHERE t.id IN ({marks(tunnel_ids)}) AND d.is_active = 1"
        f" AND t.closed_date IS NULL AND t.expires_date > ?"
    )
    return {str(row[0]) for row in conn.execute(sql, (*tunnel_ids, now_iso))}


def close(
    conn: Tx, device_id: str, tunnel_ids: Sequence[str] | None, now_iso: str, by: str
) -> list[str]:
    """Close these open tunnels of a device (all of them when `tunnel_ids` is None);
    returns the IDs that were open and are now closed."""
    where, params = f"device_id = ? AND {_OPEN}", [device_id, now_iso]
    if tunnel_ids is not None:
        if not tunnel_ids:
            return []
        where += f" AND id IN ({marks(tunnel_ids)})"
        params.extend(tunnel_ids)
    ids = [str(row[0]) for row in conn.execute(f"SELECT id FROM tunnels WHERE {where}", params)]
    if ids:
        conn.execute(
            f"UPDATE tunnels SET closed_date = ?, closed_by = ? WHERE id IN ({marks(ids)})",
            (now_iso, by, *ids),
        )
    return ids
