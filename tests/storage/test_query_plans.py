"""Queries on the per-request path answer from an index, whatever the table's size.

A plan that scans (all of a user's sessions, all rows of a table) passes every functional
test and only shows as a cost that grows with the site; the plans are asserted here.
"""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from storage import migrate, summary
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


@pytest.mark.parametrize(
    "sql, params, index",
    [
        (summary.FILES, ("o",), "COVERING INDEX files_by_org (org_id=?)"),
        (summary.OPEN_TUNNELS, ("o", "t"), "INDEX tunnels_by_org_open (org_id=? AND closed_date=?"),
        (summary.DATA_ENTRIES, ("o",), "INDEX data_by_path (group_id=?)"),
    ],
)
def test_an_orgs_summary_reads_only_that_orgs_rows(
    conn: apsw.Connection, sql: str, params: tuple[object, ...], index: str
) -> None:
    """An org admin's overview counts through indexes that start with the org: before
    migration 0031 files and tunnels were scanned whole, every org's rows."""
    found = plan(conn, sql, params)
    assert index in found and "SCAN files" not in found and "SCAN tunnels" not in found, found
