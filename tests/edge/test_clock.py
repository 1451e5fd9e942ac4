"""Timestamps as text: fixed width, UTC with `Z`, so text order is time order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from edge.kernel import clock


def test_iso_is_fixed_width_utc_and_round_trips() -> None:
    moments = [
        datetime(5, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
        datetime(2026, 11, 25, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 11, 26, 1, 0, 0, 0, tzinfo=timezone(timedelta(hours=2))),
    ]
    texts = [clock.iso(m) for m in moments]
    assert texts == [
        "0005-01-02T03:04:05.000006Z",
        "2026-11-25T23:59:59.999999Z",
        "2026-11-25T23:00:00.000000Z",
    ]
    assert [clock.parse(t) for t in texts] == moments
    assert sorted(texts) == [clock.iso(m) for m in sorted(moments)]
