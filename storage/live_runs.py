"""The live change feed's run counter (docs/events.md): one row, moved on at every start,
so the event IDs of a run begin above every ID of the runs before it."""

from __future__ import annotations

from storage.rows import Tx


def next_run(conn: Tx) -> int:
    """This run's number: one more than the last run's, durable before any event is told."""
    conn.execute("UPDATE live_runs SET runs = runs + 1 WHERE id = 1")
    row = conn.execute("SELECT runs FROM live_runs WHERE id = 1").fetchone()
    assert row is not None, "migration 0025 made the one row"
    return int(row[0])
