"""The trash: deleted records and the rows that belong to them, kept to be restored.

Deleting moves a record out of its table together with its dependent rows (as JSON, in
one `trash` row), inside one transaction; restoring puts them back in the order parents
come before children. Because the rows are gone from the live tables, no lookup, list
or permission query needs a "deleted" predicate, and unique names are free at once.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import apsw

from storage import devices, files, users
from storage.listing import Field, Scope, Table
from storage.rows import Row, Tx, many, one

# What leaves with a record, parents first (restore inserts in this order). Each clause
# selects rows by the record's ID (:id); a project takes everything inside it.
_MEMBERS = (
    "SELECT id FROM users WHERE project_id = :id UNION ALL"
    " SELECT id FROM roles WHERE project_id = :id UNION ALL"
    " SELECT id FROM groups WHERE project_id = :id UNION ALL"
    " SELECT id FROM devices WHERE project_id = :id"
)
_USER_ROWS = (
    ("pictures", "account_id = :id"),
    ("dashboards", "account_id = :id"),
    ("mfa_factors", "user_id = :id"),
)
_DEVICE_ROWS = (
    ("device_seen", "device_id = :id"),
    ("device_certificates", "device_id = :id"),
    ("device_twins", "device_id = :id"),
)
_PROJECT_DEVICES = "device_id IN (SELECT id FROM devices WHERE project_id = :id)"
DEPENDENTS: dict[str, tuple[tuple[str, str], ...]] = {
    "user": (
        ("users", "id = :id"),
        ("access", "grantee_id = :id OR target_id = :id"),
        *_USER_ROWS,
    ),
    "device": (
        ("devices", "id = :id"),
        ("access", "grantee_id = :id OR target_id = :id"),
        *_DEVICE_ROWS,
    ),
    "group": (("groups", "id = :id"), ("access", "target_id = :id")),
    "role": (("roles", "id = :id"), ("access", "target_id = :id OR grantee_id = :id")),
    "project": (
        ("projects", "id = :id"),
        ("aliases", "owner_id = :id"),
        ("users", "project_id = :id"),
        ("groups", "project_id = :id"),
        ("roles", "project_id = :id"),
        ("devices", "project_id = :id"),
        ("device_seen", _PROJECT_DEVICES),
        ("device_certificates", _PROJECT_DEVICES),
        ("device_twins", _PROJECT_DEVICES),
        ("access", f"target_id = :id OR target_id IN ({_MEMBERS}) OR grantee_id IN ({_MEMBERS})"),
        ("pictures", "account_id IN (SELECT id FROM users WHERE project_id = :id)"),
        ("dashboards", "account_id IN (SELECT id FROM users WHERE project_id = :id)"),
        ("mfa_factors", "user_id IN (SELECT id FROM users WHERE project_id = :id)"),
        ("email_templates", "project_id = :id"),
        ("provisioning_claims", "project_id = :id"),
    ),
}
TABLES = {
    "user": "users",
    "device": "devices",
    "group": "groups",
    "role": "roles",
    "project": "projects",
}
# Where an access object's two ends must still exist for it to come back.
_ENDS = "SELECT 1 FROM {table} WHERE id = ?"
_END_TABLES = ("orgs", "projects", "groups", "roles", "users", "devices")


# What groups hold beyond their rows, erased with them (never when they only go to the
# trash: a trashed group's files wait in place, unreachable, to come back on restore).
GROUP_CONTENTS: tuple[Callable[[Tx, Sequence[str]], None], ...] = (files.erase_groups,)


class RestoreConflict(Exception):
    """A row cannot come back: something now holds its unique name (or it exists)."""

    def __init__(self, table: str) -> None:
        super().__init__(table)
        self.table = table


def snapshot(conn: Tx, kind: str, record_id: str) -> dict[str, list[Row]]:
    """The record's rows and its dependents' rows, by table (each row once)."""
    out: dict[str, list[Row]] = {}
    for table, where in DEPENDENTS[kind]:
        seen = {_key(r) for r in out.get(table, [])}
        found = many(conn, f"SELECT * FROM {table} WHERE {where}", {"id": record_id})
        out.setdefault(table, []).extend(r for r in found if _key(r) not in seen)
    return {table: [_encode(r) for r in rows] for table, rows in out.items() if rows}


def accounts_ended(conn: Tx, kind: str, record_id: str, now_iso: str) -> list[str]:
    """Accounts whose sessions a delete ends: the user; a project's own users. Sessions
    signed in to a deleted project end here too. A device's API key and certificates end
    (a project's devices' too), before the snapshot: a restored device has none working."""
    if kind in ("user", "device"):
        if kind == "device":
            devices.end_credentials(conn, "id = ?", (record_id,), now_iso)
        return [record_id]
    if kind != "project":
        return []
    conn.execute("UPDATE sessions SET revoked = 1 WHERE project_id = ?", (record_id,))
    devices.end_credentials(conn, "project_id = ?", (record_id,), now_iso)
    rows = conn.execute(
        "SELECT id FROM users WHERE project_id = ?1 UNION ALL"
        " SELECT id FROM devices WHERE project_id = ?1",
        (record_id,),
    )
    return [str(r[0]) for r in rows]


def remove(conn: Tx, kind: str, record_id: str) -> bool:
    """Delete the record; triggers and foreign keys take its dependents with it."""
    conn.execute(f"DELETE FROM {TABLES[kind]} WHERE id = ?", (record_id,))
    return conn.changes() == 1


def put(conn: Tx, entry: Row, payload: Mapping[str, list[Row]]) -> None:
    conn.execute(
        "INSERT INTO trash (id, kind, org_id, project_id, name, deleted_date, deleted_by,"
        " purge_after, payload) VALUES (:id, :kind, :org_id, :project_id, :name,"
        " :deleted_date, :deleted_by, :purge_after, :payload)",
        {**entry, "payload": json.dumps(payload)},
    )


def get(conn: Tx, entry_id: str) -> Row | None:
    return one(conn, "SELECT * FROM trash WHERE id = ?", (entry_id,))


def payload(entry: Row) -> dict[str, list[Row]]:
    loaded: dict[str, list[Row]] = json.loads(entry["payload"])
    return {table: [_decode(r) for r in rows] for table, rows in loaded.items()}


def restore(conn: Tx, entry: Row) -> None:
    """Put every row back (parents first) and drop the entry. Access objects whose other
    end no longer exists stay out; a row whose unique name is taken now is a conflict."""
    for table, rows in payload(entry).items():
        for row in rows:
            if table == "access" and not _ends_exist(conn, row):
                continue
            if table == "users" and _login_taken(conn, row):
                raise RestoreConflict(table)
            columns = ", ".join(row)
            marks = ", ".join(f":{name}" for name in row)
            try:
                conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", row)
            except apsw.ConstraintError:
                raise RestoreConflict(table) from None
    conn.execute("DELETE FROM trash WHERE id = ?", (entry["id"],))


def erase(conn: Tx, entry_id: str) -> bool:
    entry = get(conn, entry_id)
    if entry is None:
        return False
    _erase_group_contents(conn, _groups_in_entry(entry))
    conn.execute("DELETE FROM trash WHERE id = ?", (entry_id,))
    return conn.changes() == 1


def purge_expired(conn: Tx, now_iso: str) -> int:
    """Erase entries whose time in the trash is over (the hourly sweep)."""
    for entry in many(conn, "SELECT * FROM trash WHERE purge_after <= ?", (now_iso,)):
        _erase_group_contents(conn, _groups_in_entry(entry))
    conn.execute("DELETE FROM trash WHERE purge_after <= ?", (now_iso,))
    return conn.changes()


def erase_contents(conn: Tx, kind: str, record_id: str) -> None:
    """Before a permanent delete: what the record's groups hold beyond their rows."""
    if kind == "group":
        _erase_group_contents(conn, [record_id])
    elif kind == "project":
        rows = conn.execute("SELECT id FROM groups WHERE project_id = ?", (record_id,))
        _erase_group_contents(conn, [str(r[0]) for r in rows])


def _groups_in_entry(entry: Row) -> list[str]:
    if entry["kind"] == "group":
        return [str(entry["id"])]
    if entry["kind"] == "project":
        return [str(row["id"]) for row in payload(entry).get("groups", [])]
    return []


def _erase_group_contents(conn: Tx, group_ids: Sequence[str]) -> None:
    if group_ids:
        for erase_all in GROUP_CONTENTS:
            erase_all(conn, group_ids)


def _ends_exist(conn: Tx, row: Mapping[str, Any]) -> bool:
    return all(
        any(
            conn.execute(_ENDS.format(table=t), (row[end],)).fetchone() is not None
            for t in _END_TABLES
        )
        for end in ("target_id", "grantee_id")
    )


def _login_taken(conn: Tx, row: Mapping[str, Any]) -> bool:
    """A login (username, e-mail, phone number) another user of the org now uses."""
    logins = {"username": row["username_folded"], "email": row["email_folded"]}
    if row.get("phone_folded"):
        logins["phone_number"] = row["phone_folded"]
    return users.clash(conn, row["org_id"], row["id"], logins) is not None


def _key(row: Row) -> Any:
    return row.get("id") or tuple(sorted(row.items()))


def _encode(row: Row) -> Row:
    """JSON has no bytes: BLOB columns (pictures) travel as base64."""
    return {
        k: {"$bytes": base64.b64encode(v).decode()} if isinstance(v, bytes) else v
        for k, v in row.items()
    }


def _decode(row: Row) -> Row:
    return {
        k: base64.b64decode(v["$bytes"]) if isinstance(v, dict) and "$bytes" in v else v
        for k, v in row.items()
    }


LIST = Table(
    "trash",
    {
        "id": Field("id", "trash.id", not_null=True),
        "kind": Field("text", "trash.kind"),
        "name": Field("text", "trash.name"),
        "project_id": Field("id", "trash.project_id"),
        "deleted_date": Field("datetime", "trash.deleted_date", not_null=True),
        "deleted_by": Field("id", "trash.deleted_by"),
        "purge_after": Field("datetime", "trash.purge_after", not_null=True),
    },
    fts="trash_fts",  # what was deleted: its name and kind (migration 0036)
    fts_columns=("name", "kind"),
)


def reach(org_id: str, projects: Sequence[str] | None) -> Scope:
    """List scope: the org's trash, or (`projects` given) only what belonged to those
    projects (none: nothing)."""
    if projects is None:
        return Scope("trash.org_id = ?", (org_id,))
    marks = ", ".join("?" for _ in projects) or "NULL"
    return Scope(f"trash.org_id = ? AND trash.project_id IN ({marks})", (org_id, *projects))
