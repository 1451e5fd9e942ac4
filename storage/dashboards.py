"""Per-user dashboard configuration: one JSON document per user."""

from __future__ import annotations

import json
from typing import Any

from storage.rows import Tx, scalar


def put(conn: Tx, account_id: str, config: dict[str, Any], now: str) -> None:
    conn.execute(
        "INSERT INTO dashboards (account_id, config, updated_date) VALUES (?, ?, ?)"
        " ON CONFLICT (account_id) DO UPDATE SET config = excluded.config,"
        " updated_date = excluded.updated_date",
        (account_id, json.dumps(config), now),
    )


def get(conn: Tx, account_id: str) -> dict[str, Any] | None:
    value = scalar(conn, "SELECT config FROM dashboards WHERE account_id = ?", (account_id,))
    return None if value is None else dict(json.loads(value))
