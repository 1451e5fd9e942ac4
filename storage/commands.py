"""Commands sent to devices: the device_commands table (docs/commands.md).

A command's `state` moves one way: `sent` (the device's sessions got it, its caller waits)
or `queued` (waiting for the device) -> `delivered` -> `answered`; or it ends `timed_out`
(no reply in time) or `expired` (never delivered, or not answered, before its
`expires_date`). Every change of state is one conditional UPDATE, so a reply that comes
after the command timed out finds nothing to change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storage.listing import Scope, Table, column
from storage.records import Codec, Record
from storage.rows import Tx, insert_record, record, records, scalar

WAITING = ("sent", "queued", "delivered")  # states a command can still leave


@dataclass(frozen=True, slots=True)
class Command(Record):
    id: str
    org_id: str
    device_id: str
    name: str
    payload: dict[str, Any]
    state: str
    queued: bool
    created_date: str
    created_by: str
    expires_date: str
    delivered_date: str | None
    ended_date: str | None
    reply_status: int | None
    reply_payload: dict[str, Any] | None


COMMANDS = Codec(Command, "device_commands")
_WAITING = "state IN ('sent', 'queued', 'delivered')"
_LEFT_OUT = {"payload": "'{}'", "reply_payload": "NULL"}
_SUMMARY = ", ".join(_LEFT_OUT.get(name, f"device_commands.{name}") for name in COMMANDS.columns)
# A page of a device's commands (the list engine's), without their payloads (of_device).
SUMMARIES = Codec(Command, "device_commands")
SUMMARIES.select = _SUMMARY
LIST = Table(
    "device_commands",
    {
        "id": column("device_commands", "id", "id", not_null=True),
        "name": column("device_commands", "text", "name"),
        "state": column("device_commands", "text", "state"),
        "queued": column("device_commands", "bool", "queued"),
        "created_date": column("device_commands", "datetime", "created_date", not_null=True),
        "created_by": column("device_commands", "id", "created_by"),
        "expires_date": column("device_commands", "datetime", "expires_date"),
        "delivered_date": column("device_commands", "datetime", "delivered_date"),
        "ended_date": column("device_commands", "datetime", "ended_date"),
    },
    codec=SUMMARIES,
)


def create(conn: Tx, value: Command) -> None:
    insert_record(conn, COMMANDS, value)


def get(conn: Tx, device_id: str, command_id: str) -> Command | None:
    return record(conn, COMMANDS, "id = ? AND device_id = ?", (command_id, device_id))


def of_device(device_id: str) -> Scope:
    """A device's commands, for the list engine over LIST: read without their payloads
    and replies' payloads (`{}` and None), so a page of a thousand large commands is never
    read whole into memory (the list shows neither)."""
    return Scope("device_commands.device_id = ?", (device_id,))


def kept_bytes(conn: Tx, device_id: str) -> int:
    """The bytes of payloads and replies the device's commands keep (its budget)."""
    sql = (
        "SELECT coalesce(sum(length(CAST(payload AS BLOB))"
        " + coalesce(length(CAST(reply_payload AS BLOB)), 0)), 0)"
        " FROM device_commands WHERE device_id = ?"
    )
    return int(scalar(conn, sql, (device_id,)))


def sent_since(conn: Tx, device_id: str, since: str) -> int:
    """How many commands were sent to the device from `since` on (the rate limit)."""
    sql = "SELECT count(*) FROM device_commands WHERE device_id = ? AND created_date >= ?"
    return int(scalar(conn, sql, (device_id, since)))


def waiting_for(conn: Tx, device_id: str, now: str, limit: int) -> list[Command]:
    """The first `limit` queued commands of a device not yet expired, oldest first."""
    sql = (
        f"SELECT {COMMANDS.select} FROM device_commands WHERE device_id = ?"
        " AND state = 'queued' AND expires_date > ? ORDER BY created_date, id LIMIT ?"
    )
    return records(conn, COMMANDS, sql, (device_id, now, limit))


def delivered(conn: Tx, command_ids: list[str], now: str) -> None:
    for command_id in command_ids:
        conn.execute(
            "UPDATE device_commands SET state = 'delivered', delivered_date = ?"
            " WHERE id = ? AND state = 'queued'",
            (now, command_id),
        )


def answered(
    conn: Tx,
    device_id: str,
    command_id: str,
    now: str,
    status: int,
    payload: dict[str, Any] | None,
) -> Command | None:
    """Record the reply of a command still waiting and not expired; None when there is
    none (unknown, another device's, answered already, timed out, expired). A payload of
    None: the reply's payload was dropped (past the device's budget), its status kept."""
    conn.execute(
        "UPDATE device_commands SET state = 'answered', ended_date = ?, reply_status = ?,"
        f" reply_payload = ? WHERE id = ? AND device_id = ? AND {_WAITING}"
        " AND expires_date > ?",
        (
            now,
            status,
            COMMANDS.changes({"reply_payload": payload})["reply_payload"],
            command_id,
            device_id,
            now,
        ),
    )
    return get(conn, device_id, command_id) if conn.changes() == 1 else None


def timed_out(conn: Tx, command_id: str, now: str) -> bool:
    conn.execute(
        "UPDATE device_commands SET state = 'timed_out', ended_date = ?"
        f" WHERE id = ? AND {_WAITING}",
        (now, command_id),
    )
    return conn.changes() == 1


def expire(conn: Tx, now: str) -> int:
    """Commands past their `expires_date` with no reply end as `expired`."""
    conn.execute(
        f"UPDATE device_commands SET state = 'expired', ended_date = expires_date"
        f" WHERE {_WAITING} AND expires_date <= ?",
        (now,),
    )
    return conn.changes()


def purge_ended_before(conn: Tx, before: str) -> int:
    conn.execute("DELETE FROM device_commands WHERE ended_date < ?", (before,))
    return conn.changes()
