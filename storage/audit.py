"""The audit log's table: events written inside the action's own transaction, listed
through the list engine, pruned past the retention period (docs/audit.md)."""

from __future__ import annotations

from typing import Any

from storage.listing import Field, Table, column
from storage.records import AUDIT_EVENTS, AuditEvent
from storage.rows import Tx

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


# What names each kind of actor or target: the column of its table, by ID.
_NAMES = {
    "user": ("users", "username"),
    "device": ("devices", "name"),
    "staff": ("staff", "username"),
    "role": ("roles", "name"),
    "group": ("groups", "name"),
    "project": ("projects", "name"),
    "org": ("orgs", "name"),
    "claim": ("provisioning_claims", "name"),
}


def add(conn: Tx, event: AuditEvent) -> None:
    """Record one event, with its actor's and target's names as they are in this
    transaction (after the action, so a new account is found; a deleted one by the `name`
    its details carry), unless the event names them already. The names are read by the
    insert itself: one statement per event in the writer. An access object is named by its
    grantee and what it is on ('ann on Ward')."""
    row = AUDIT_EVENTS.encode(event)
    details = event.details
    shown = details.get("name")
    params = {
        **row,
        "grantee_id": details.get("grantee_id"),
        "on_id": details.get("on"),
        "shown": str(shown) if shown is not None else None,
    }
    if event.target_kind == "access":
        grantee = _name(details.get("grantee_kind"), "grantee_id")
        on = _name(details.get("kind"), "on_id")
        target = f"COALESCE({grantee} || ' on ' || {on}, {grantee}, {on})"
    else:
        target = f"COALESCE({_name(event.target_kind, 'target_id')}, :shown)"
    values = {name: f":{name}" for name in row}
    values["actor_name"] = f"COALESCE(:actor_name, {_name(event.actor_kind, 'actor_id')})"
    values["target_name"] = f"COALESCE(:target_name, {target})"
    columns = ", ".join(values)
    conn.execute(
        f"INSERT INTO audit_events ({columns}) VALUES ({', '.join(values.values())})", params
    )


def _name(kind: Any, parameter: str) -> str:
    """The name of the row of `kind` whose ID is bound to `parameter`, as a subquery (NULL
    for a kind that has no name, or an ID that names nothing now)."""
    found = _NAMES.get(kind) if isinstance(kind, str) else None
    if found is None:
        return "NULL"
    table, column = found
    return f"(SELECT {column} FROM {table} WHERE id = :{parameter})"


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
