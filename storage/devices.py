"""Devices: the devices table, its list spec, the API-key lookup, and when each was seen."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from storage import accounts
from storage.access import marks
from storage.listing import Field, Table
from storage.records import DEVICES, Codec, Device, Record
from storage.rows import Tx, insert_record, many, one, record, update_record


@dataclass(frozen=True, slots=True)
class Placement(Record):
    """Where a device is (what its topics are spelled from) and whether it is active: all
    that a job's notices and a device's job update read of it, four columns where a
    `Device` is 27 with four JSON ones to decode (CPU per job execution, #31)."""

    id: str
    org_id: str
    project_id: str | None
    is_active: bool


PLACEMENTS = Codec(Placement, "devices")

LAST_SEEN = "(SELECT s.last_seen FROM device_seen s WHERE s.device_id = devices.id)"


def create(conn: Tx, value: Device) -> None:
    insert_record(conn, DEVICES, value)


def get(conn: Tx, device_id: str) -> Device | None:
    return record(conn, DEVICES, "id = ?", (device_id,))


def placement(conn: Tx, device_id: str) -> Placement | None:
    return record(conn, PLACEMENTS, "id = ?", (device_id,))


def by_key_hash(conn: Tx, key_hash: str) -> Device | None:
    """The device whose API key has this SHA-256 (the unique index: one probe)."""
    return record(conn, DEVICES, "api_key_hash = ?", (key_hash,))


def name_taken(conn: Tx, org_id: str, device_id: str, name_folded: str) -> bool:
    sql = "SELECT 1 FROM devices WHERE org_id = ? AND name_folded = ? AND id != ?"
    return one(conn, sql, (org_id, name_folded, device_id)) is not None


def patch(conn: Tx, device_id: str, changes: dict[str, object]) -> bool:
    return update_record(conn, DEVICES, device_id, changes)


def end_credentials(conn: Tx, where: str, params: Sequence[object], now_iso: str) -> None:
    """No key works and every certificate is revoked, for the devices `where` selects
    (a delete: what comes back from the trash has no working credentials)."""
    selected = f"SELECT id FROM devices WHERE {where}"
    conn.execute(f"UPDATE devices SET api_key_hash = NULL WHERE id IN ({selected})", params)
    conn.execute(
        "UPDATE device_certificates SET revoked_date = ?, status = 'revoked',"
        " reason = 'cessation_of_operation'"
        f" WHERE revoked_date IS NULL AND device_id IN ({selected})",
        (now_iso, *params),
    )


def last_seen(conn: Tx, device_ids: Sequence[str]) -> dict[str, str]:
    rows = many(
        conn,
        f"SELECT device_id, last_seen FROM device_seen WHERE device_id IN ({marks(device_ids)})",
        tuple(device_ids),
    )
    return {str(r["device_id"]): str(r["last_seen"]) for r in rows}


def mark_seen(conn: Tx, device_ids: Collection[str], now_iso: str) -> None:
    """One statement for a whole batch; IDs that name no device (any more) are skipped."""
    ids = tuple(device_ids)
    conn.execute(
        "INSERT INTO device_seen (device_id, last_seen)"
        f" SELECT id, ? FROM devices WHERE id IN ({marks(ids)})"
        " ON CONFLICT (device_id) DO UPDATE SET last_seen = excluded.last_seen",
        (now_iso, *ids),
    )


def _column(kind: str, name: str, sortable: bool = True, not_null: bool = False) -> Field:
    return Field(kind, f"devices.{name}", sortable, not_null=not_null)


_TEXT = ("manufacturer", "product", "site", "serial_number", "mac_address", "locale", "zoneinfo")

LIST = Table(
    "devices",
    {
        "id": _column("id", "id", not_null=True),
        "name": Field("text", "devices.name", True, "devices.name_folded", not_null=True),
        **{name: _column("text", name) for name in _TEXT},
        "owner": _column("id", "owner_id"),
        "tags": _column("tags", "tags", sortable=False),
        "is_active": _column("bool", "is_active"),
        "is_delete_protected": _column("bool", "is_delete_protected"),
        "is_org_admin": Field("bool", accounts.is_org_admin("devices")),
        "last_seen": Field("datetime", LAST_SEEN),
        "api_key_last_changed": _column("datetime", "api_key_last_changed"),
        "mqtt_credentials_last_changed": _column("datetime", "mqtt_credentials_last_changed"),
        "created_date": _column("datetime", "created_date", not_null=True),
        "created_by": _column("id", "created_by"),
        "last_updated_date": _column("datetime", "last_updated_date", not_null=True),
        "last_updated_by": _column("id", "last_updated_by"),
    },
    fts="devices_fts",
    fts_columns=("name", "manufacturer", "product", "site", "serial_number", "mac_address", "tags"),
    json_columns=("custom_attributes", "restricted_custom_attributes"),
    codec=DEVICES,
)
