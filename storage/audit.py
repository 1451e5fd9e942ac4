"""The audit log's table: events written inside the action's own transaction, listed
through the list engine, pruned past the retention period (docs/audit.md)."""

from __future__ import annotations

from storage.listing import Field, Table, column
from storage.records import AUDIT_EVENTS, AuditEvent
from storage.rows import Tx, insert_record, scalar

PRUNE_BATCH = 5000  # rows deleted per statement, so one prune never holds the writer long


def _field(kind: str, name: str, not_null: bool = False) -> Field:
    return column("audit_events", kind, name, not_null=not_null)


LIST = Table(
    "audit_events",
    {
        "id": _field("id", "id", not_null=True),
        "created_date": _field("datetime", "created_date", not_null=True),
        "org_id": _field("id", "org_id"),
        "action": _field("text", "action", not_null=True),
        "actor_kind": _field("text", "actor_kind", not_null=True),
        "actor_id": _field("id", "actor_id"),
        "target_kind": _field("text", "target_kind"),
        "target_id": _field("id", "target_id"),
        "client": _field("text", "client"),
        "request_id": _field("id", "request_id"),
        "actor_name": _field("text", "actor_name"),
        "target_name": _field("text", "target_name"),
    },
    codec=AUDIT_EVENTS,
)
SCOPE = "audit_events.org_id = ?"


# What names each kind of actor or target, by ID.
_NAMES = {
    "user": "SELECT username FROM users WHERE id = ?",
    "device": "SELECT name FROM devices WHERE id = ?",
    "staff": "SELECT username FROM staff WHERE id = ?",
    "role": "SELECT name FROM roles WHERE id = ?",
    "group": "SELECT name FROM groups WHERE id = ?",
    "project": "SELECT name FROM projects WHERE id = ?",
    "org": "SELECT name FROM orgs WHERE id = ?",
}


def add(conn: Tx, event: AuditEvent) -> None:
    insert_record(conn, AUDIT_EVENTS, event)


def name_of(conn: Tx, kind: str | None, item_id: str | None) -> str | None:
    """The name of a user, device, staff account, role, group, project or org as it is in
    this transaction; None for another kind or an ID that names nothing (now)."""
    sql = _NAMES.get(kind or "")
    if sql is None or not item_id:
        return None
    found = scalar(conn, sql, (item_id,))
    return str(found) if found is not None else None


def prune_before(conn: Tx, cutoff: str) -> int:
    """Delete events older than `cutoff` (ISO time), a batch at a time; how many went."""
    removed = 0
    while True:
        conn.execute(
            "DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events"
            " WHERE created_date < ? ORDER BY created_date LIMIT ?)",
            (cutoff, PRUNE_BATCH),
        )
        changed = conn.changes()
        removed += changed
        if changed < PRUNE_BATCH:
            return removed


def recount(conn: Tx, event_id: str, count: int) -> None:
    """Set the `count` of an event that stands for several (MQTT authentication failures
    of one address and user name in one minute, edge/devices/auth_failures.py)."""
    conn.execute(
        "UPDATE audit_events SET details = json_set(details, '$.count', ?) WHERE id = ?",
        (count, event_id),
    )
