"""Per-user dashboard configuration: one JSON document per user."""

from __future__ import annotations

import apsw

from storage.rows import scalar


def put(conn: apsw.Connection, account_id: str, config: str, now: str) -> None:
    conn.execute(
        "INSERT INTO dashboards (account_id, config, updated_date) VALUES (?, ?, ?)"
        " ON CONFLICT (account_id) DO UPDATE SET config = excluded.config,"
        " updated_date = excluded.updated_date",
        (account_id, config, now),
    )


def get(conn: apsw.Connection, account_id: str) -> str | None:
    value = scalar(conn, "SELECT config FROM dashboards WHERE account_id = ?", (account_id,))
    return None if value is None else str(value)
