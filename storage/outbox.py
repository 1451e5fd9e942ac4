"""The outbox: mail and SMS waiting to be delivered, and their delivery state."""

from __future__ import annotations

import apsw

from storage.rows import Row, insert, many, update


def enqueue(conn: apsw.Connection, message: Row) -> None:
    insert(conn, "outbox", message)


def by_purpose(conn: apsw.Connection, purpose: str) -> list[Row]:
    return many(conn, "SELECT * FROM outbox WHERE purpose = ? ORDER BY created_date", (purpose,))


def claim_due(conn: apsw.Connection, now: str, lease_until: str, limit: int) -> list[Row]:
    """Pending messages due by `now`, leased until `lease_until` so no other worker takes them.

    Call inside a write transaction: the select and the lease are one step.
    """
    rows = many(
        conn,
        "SELECT * FROM outbox WHERE status = 'pending' AND next_attempt_at <= ?"
        " ORDER BY next_attempt_at, id LIMIT ?",
        (now, limit),
    )
    for row in rows:
        update(conn, "outbox", "id", row["id"], {"next_attempt_at": lease_until})
    return rows


def mark(conn: apsw.Connection, message_id: str, values: Row) -> None:
    update(conn, "outbox", "id", message_id, values)


def backlog(conn: apsw.Connection) -> dict[str, int]:
    """Messages not (yet) delivered, by status: pending and failed (GET /metrics)."""
    rows = conn.execute(
        "SELECT status, count(*) FROM outbox WHERE status IN ('pending', 'failed') GROUP BY status"
    )
    found = {"pending": 0, "failed": 0}
    found.update({str(status): int(count) for status, count in rows})
    return found
