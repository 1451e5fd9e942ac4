"""Billing points: the ledger, metered usage per day, snapshots and rates (docs/billing.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from storage.listing import Field, Table, column
from storage.records import BILLING_ENTRIES, BillingEntry
from storage.rows import Row, Tx, insert_record, many, one, record, scalar, update_record

# What each gauge counts, per organization, in one statement each (a daily snapshot).
# octet_length: the bytes of each value from its row's header, not by reading the value.
_GAUGES = {
    "devices": "SELECT org_id, count(*) FROM devices GROUP BY org_id",
    "users": "SELECT org_id, count(*) FROM users GROUP BY org_id",
    "data_bytes": (
        "SELECT groups.org_id, sum(octet_length(data.value)) FROM data"
        " JOIN groups ON groups.id = data.group_id GROUP BY groups.org_id"
    ),
    "file_bytes": "SELECT org_id, sum(size) FROM files GROUP BY org_id",
}


def _field(kind: str, name: str, not_null: bool = False) -> Field:
    return column("billing_entries", kind, name, not_null=not_null)


LIST = Table(
    "billing_entries",
    {
        "id": _field("id", "id", not_null=True),
        "kind": _field("text", "kind", not_null=True),
        "points": _field("number", "points", not_null=True),
        "meter": _field("text", "meter"),
        "quantity": _field("number", "quantity"),
        "day": _field("text", "day"),
        "description": _field("text", "description", not_null=True),
        "tags": column("billing_entries", "tags", "tags", sortable=False),
        "created_date": _field("datetime", "created_date", not_null=True),
        "created_by": _field("id", "created_by"),
        "last_updated_date": _field("datetime", "last_updated_date", not_null=True),
        "last_updated_by": _field("id", "last_updated_by"),
    },
    codec=BILLING_ENTRIES,
)
SCOPE = "billing_entries.org_id = ?"


# -- the ledger ----------------------------------------------------------------------------
def add(conn: Tx, entry: BillingEntry) -> None:
    insert_record(conn, BILLING_ENTRIES, entry)


def get(conn: Tx, org_id: str, entry_id: str) -> BillingEntry | None:
    return record(conn, BILLING_ENTRIES, "id = ? AND org_id = ?", (entry_id, org_id))


def patch(conn: Tx, entry_id: str, changes: dict[str, Any]) -> bool:
    return update_record(conn, BILLING_ENTRIES, entry_id, changes)


def delete(conn: Tx, entry_id: str) -> bool:
    conn.execute("DELETE FROM billing_entries WHERE id = ?", (entry_id,))
    return conn.changes() == 1


def totals(conn: Tx, org_id: str) -> tuple[int, int]:
    """(credits, debits) of an organization: the sums of its positive and negative entries."""
    row = one(
        conn,
        "SELECT coalesce(sum(max(points, 0)), 0) AS plus, coalesce(sum(min(points, 0)), 0)"
        " AS minus FROM billing_entries WHERE org_id = ?",
        (org_id,),
    )
    return (int(row["plus"]), int(row["minus"])) if row else (0, 0)


def points_by_day(conn: Tx, org_id: str, first: str, last: str) -> list[Row]:
    """Points per day and kind; a usage debit counts on the day it was used for."""
    return many(
        conn,
        "SELECT coalesce(day, substr(created_date, 1, 10)) AS on_day, kind, meter,"
        " sum(points) AS points FROM billing_entries WHERE org_id = ?"
        " AND coalesce(day, substr(created_date, 1, 10)) BETWEEN ? AND ?"
        " GROUP BY on_day, kind, meter",
        (org_id, first, last),
    )


# -- metered usage -------------------------------------------------------------------------
def add_counts(conn: Tx, day: str, meter: str, counts: Mapping[str, int]) -> None:
    """Add a counter's flush; organizations deleted meanwhile are skipped."""
    for org_id, quantity in counts.items():
        conn.execute(
            "INSERT INTO billing_usage (org_id, day, meter, quantity)"
            " SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM orgs WHERE id = ?)"
            " ON CONFLICT (org_id, day, meter)"
            " DO UPDATE SET quantity = quantity + excluded.quantity",
            (org_id, day, meter, quantity, org_id),
        )


def gauges(conn: Tx) -> dict[str, dict[str, int]]:
    """Every gauge of every organization now: {meter: {org_id: quantity}}."""
    return {
        meter: {org_id: int(value or 0) for org_id, value in conn.execute(sql)}
        for meter, sql in _GAUGES.items()
    }


def snapshot_taken(conn: Tx, day: str) -> bool:
    return scalar(conn, "SELECT 1 FROM billing_snapshots WHERE day = ?", (day,)) is not None


def put_snapshot(conn: Tx, day: str, values: Mapping[str, Mapping[str, int]], now: str) -> bool:
    """Record a day's gauges once; False if that day already has its snapshot."""
    if snapshot_taken(conn, day):
        return False
    conn.execute("INSERT INTO billing_snapshots (day, taken_date) VALUES (?, ?)", (day, now))
    for meter, by_org in values.items():
        for org_id, quantity in by_org.items():
            conn.execute(
                "INSERT INTO billing_usage (org_id, day, meter, quantity)"
                " SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM orgs WHERE id = ?)"
                " ON CONFLICT (org_id, day, meter) DO UPDATE SET quantity = excluded.quantity",
                (org_id, day, meter, quantity, org_id),
            )
    return True


def undebited(conn: Tx, before_day: str) -> list[Row]:
    """Usage of closed days (before `before_day`) not yet debited."""
    return many(
        conn,
        "SELECT org_id, day, meter, quantity FROM billing_usage"
        " WHERE debited = 0 AND day < ? ORDER BY day, org_id, meter",
        (before_day,),
    )


def mark_debited(conn: Tx, org_id: str, day: str, meter: str) -> None:
    conn.execute(
        "UPDATE billing_usage SET debited = 1 WHERE org_id = ? AND day = ? AND meter = ?",
        (org_id, day, meter),
    )


def usage(conn: Tx, org_id: str, first: str, last: str) -> list[Row]:
    return many(
        conn,
        "SELECT day, meter, quantity FROM billing_usage WHERE org_id = ?"
        " AND day BETWEEN ? AND ? ORDER BY day, meter",
        (org_id, first, last),
    )


# -- rates ---------------------------------------------------------------------------------
def rates(conn: Tx, org_id: str) -> dict[str, int]:
    text = scalar(conn, "SELECT rates FROM billing_rates WHERE org_id = ?", (org_id,))
    return dict(json.loads(text)) if text else {}


def rates_of(conn: Tx, org_ids: Iterable[str]) -> dict[str, dict[str, int]]:
    return {org_id: rates(conn, org_id) for org_id in set(org_ids)}


def put_rates(conn: Tx, org_id: str, values: Mapping[str, int], now: str, actor: str) -> None:
    conn.execute(
        "INSERT INTO billing_rates (org_id, rates, last_updated_date, last_updated_by)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (org_id) DO UPDATE SET rates = excluded.rates,"
        " last_updated_date = excluded.last_updated_date,"
        " last_updated_by = excluded.last_updated_by",
        (org_id, json.dumps(dict(values)), now, actor),
    )
