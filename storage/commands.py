"""Commands sent to devices: the device_commands table (docs/commands.md).

A command's `state` moves one way: `sent` (the device's sessions got it, its caller waits)
or `queued` (waiting for the device) -> `delivered` -> `answered`; or it ends `timed_out`
(no reply in time) or `expired` (never delivered, or not answered, before its
`expires_date`), or, queued and not yet answered, `canceled` by a caller. Every change
of state is one conditional UPDATE, so a reply that comes after the command timed out (or
was canceled) finds nothing to change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storage.listing import Scope, Table, column
from storage.records import Codec, Record
from storage.rows import Tx, insert_record, one, record, records, scalar

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


@dataclass(frozen=True, slots=True)
class Holder:
    """Whose view of a device's byte budget: `by`'s, at `now`; finished commands are
    kept `retention_hours` after they ended (the sweep's), so from `kept_since` on."""

    by: str
    now: str
    kept_since: str
    retention_hours: int


@dataclass(frozen=True, slots=True)
class Held:
    """The payload bytes of a device's commands as `by`'s budget sees them: its own still
    waiting, its own finished and not yet swept, and everyone else's still waiting."""

    waiting: int
    ended: int
    others: int


_PAYLOAD = "length(CAST(payload AS BLOB))"
_REPLY = "coalesce(length(CAST(reply_payload AS BLOB)), 0)"
_LIVE = f"{_WAITING} AND expires_date > :now"
_MINE_LIVE = f"device_id = :device AND created_by = :by AND {_LIVE}"
_MINE_KEPT = "created_by = :by AND coalesce(ended_date, expires_date) > :kept_since"
# What a payload holds against `by`'s budget: every command still waiting for its device
# or its reply (anyone's), and `by`'s own until the sweep deletes them. Others' finished
# commands, expired ones included, hold nothing against `by`; replies count apart
# (reply_bytes).
_HELD = f"device_id = :device AND (({_LIVE}) OR ({_MINE_KEPT}))"
# When a held command stops holding: another's at its expiry, `by`'s own once swept.
_RELEASE = (
    "CASE WHEN created_by = :by"
    " THEN julianday(coalesce(ended_date, expires_date)) + :hours / 24.0"
    " ELSE julianday(expires_date) END"
)


def _held(device_id: str, holder: Holder) -> dict[str, str | int]:
    return {
        "device": device_id,
        "now": holder.now,
        "by": holder.by,
        "kept_since": holder.kept_since,
        "hours": holder.retention_hours,
    }


def held_bytes(conn: Tx, device_id: str, holder: Holder) -> Held:
    """The payload bytes that count against `holder`'s budget on the device (_HELD),
    split into its own waiting, its own finished, and the others' waiting."""
    sql = (
        f"SELECT coalesce(sum(CASE WHEN created_by = :by AND {_LIVE} THEN {_PAYLOAD} END), 0)"
        f" AS waiting, coalesce(sum(CASE WHEN created_by = :by AND NOT ({_LIVE})"
        f" THEN {_PAYLOAD} END), 0) AS ended,"
        f" coalesce(sum(CASE WHEN created_by != :by THEN {_PAYLOAD} END), 0) AS others"
        f" FROM device_commands WHERE {_HELD}"
    )
    found = one(conn, sql, _held(device_id, holder)) or {"waiting": 0, "ended": 0, "others": 0}
    return Held(int(found["waiting"]), int(found["ended"]), int(found["others"]))


def frees_in(
    conn: Tx, device_id: str, holder: Holder, needed: int, others_cap: int = 0
) -> float | None:
    """Seconds until at least `needed` of the payload bytes counted against `holder` are
    freed, as the held commands expire or are swept (sooner when some are canceled or
    answered); None when they never would be. The others' waiting bytes count at most
    `others_cap`: one of theirs frees room only as far as what stays of theirs falls below
    the cap. With `others_cap` 0, only `holder`'s own waiting commands are counted, each
    until its expiry (its share of the waiting bytes)."""
    rows, release = (_HELD, _RELEASE) if others_cap else (_MINE_LIVE, "julianday(expires_date)")
    freed = "mine + min(:others, :cap) - min(:others - theirs, :cap)"
    sql = (
        f"SELECT (release - julianday(:now)) * 86400.0 FROM"
        f" (SELECT release, sum(CASE WHEN created_by = :by THEN bytes ELSE 0 END) OVER w AS mine,"
        f" sum(CASE WHEN created_by = :by THEN 0 ELSE bytes END) OVER w AS theirs"
        f" FROM (SELECT created_by, {_PAYLOAD} AS bytes, {release} AS release"
        f" FROM device_commands WHERE {rows})"
        " WINDOW w AS (ORDER BY release ROWS UNBOUNDED PRECEDING))"
        f" WHERE {freed} >= :needed ORDER BY release LIMIT 1"
    )
    others = held_bytes(conn, device_id, holder).others if others_cap else 0
    args = {**_held(device_id, holder), "needed": needed, "others": others, "cap": others_cap}
    found = scalar(conn, sql, args)
    return None if found is None else float(found)


def reply_bytes(conn: Tx, device_id: str, holder: Holder) -> int:
    """The bytes of the replies kept (until swept) to `holder`'s commands on the device:
    what a new reply to one of them is counted with."""
    sql = (
        f"SELECT coalesce(sum({_REPLY}), 0) FROM device_commands"
        f" WHERE device_id = :device AND {_MINE_KEPT}"
    )
    return int(scalar(conn, sql, _held(device_id, holder)))


def sent_since(conn: Tx, device_id: str, since: str, by: str | None = None) -> tuple[int, str]:
    """How many commands were sent to the device from `since` on (by `by` alone, when
    given), and when the first of them was (the rate limits; '' when none was)."""
    sql = (
        "SELECT count(*) AS n, coalesce(min(created_date), '') AS first FROM device_commands"
        " WHERE device_id = ? AND created_date >= ?"
    )
    args: tuple[str, ...] = (device_id, since)
    if by is not None:
        sql, args = sql + " AND created_by = ?", (*args, by)
    found = one(conn, sql, args) or {"n": 0, "first": ""}
    return int(found["n"]), str(found["first"])


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


def cancel(conn: Tx, device_id: str, command_id: str, now: str) -> bool:
    """End a queued command still waiting for its device or its reply as `canceled`,
    its payload dropped (its bytes free at once); whether there was one. A reply that
    comes later finds nothing to answer, and a delivery nothing to mark."""
    conn.execute(
        "UPDATE device_commands SET state = 'canceled', ended_date = ?, payload = '{}'"
        " WHERE id = ? AND device_id = ? AND queued = 1"
        " AND state IN ('queued', 'delivered') AND expires_date > ?",
        (now, command_id, device_id, now),
    )
    return conn.changes() == 1


def purge_ended_before(conn: Tx, before: str) -> int:
    conn.execute("DELETE FROM device_commands WHERE ended_date < ?", (before,))
    return conn.changes()
