"""Queries on the per-request path answer from an index, whatever the table's size.

A plan that scans (all of a user's sessions, all rows of a table) passes every functional
test and only shows as a cost that grows with the site; the plans are asserted here.
"""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from storage import migrate
from storage.users import LAST_SEEN_ONE


@pytest.fixture
def conn(tmp_path: Path) -> apsw.Connection:
    path = tmp_path / "edge.db"
    migrate.apply_pending(path)
    return apsw.Connection(str(path))


def plan(conn: apsw.Connection, sql: str, params: tuple[object, ...]) -> str:
    return " | ".join(str(row[-1]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))


@pytest.mark.parametrize(
    "sql, params",
    [
        (LAST_SEEN_ONE, ("u",)),
        (
            "SELECT account_id, max(created_date) FROM sessions"
            " WHERE account_id IN (?, ?) GROUP BY account_id",
            ("u", "v"),
        ),
    ],
)
def test_last_seen_reads_one_index_entry_per_user(
    conn: apsw.Connection, sql: str, params: tuple[object, ...]
) -> None:
    assert "COVERING INDEX sessions_by_account" in plan(conn, sql, params)
