"""The change feed (edge/live/feed.py): IDs of a run above every earlier run's, the window
bounded by count and by age, and `since` answering reload (None) for every ID it cannot
resume from. The HTTP side of the same rules is tests/api/test_events.py."""

from __future__ import annotations

from edge.live.feed import RUN_SPAN, Feed


def feed(window_seconds: float = 300, count: int = 10) -> tuple[Feed, list[float]]:
    now = [0.0]
    made = Feed(window_seconds, count)
    made.monotonic = lambda: now[0]
    made.begin(3)
    return made, now


def tell(made: Feed, n: int) -> list[int]:
    return [made.publish("data", "org", "group", f"/p{i}", {}).id for i in range(n)]


def test_a_run_numbers_above_every_earlier_run() -> None:
    made, _ = feed()
    assert tell(made, 2) == [3 * RUN_SPAN + 1, 3 * RUN_SPAN + 2]
    made.begin(4)
    assert tell(made, 1) == [4 * RUN_SPAN + 1]
    assert made.since(3 * RUN_SPAN + 2) is None  # the earlier run's window is gone


def test_since_resumes_within_the_window() -> None:
    made, _ = feed()
    ids = tell(made, 5)
    resumed = made.since(ids[1])
    assert resumed is not None and [c.id for c in resumed] == ids[2:]
    assert made.since(ids[-1]) == []
    assert made.since(made.last_id) == []


def test_from_the_run_start_nothing_is_missed() -> None:
    made, _ = feed()
    first = made.last_id
    ids = tell(made, 3)
    resumed = made.since(first)
    assert resumed is not None and [c.id for c in resumed] == ids


def test_past_the_count_the_client_reloads() -> None:
    made, _ = feed(count=10)
    ids = tell(made, 12)  # the first two left the window
    assert made.since(ids[0]) is None
    kept = made.since(ids[1])  # everything after it is still there
    assert kept is not None and len(kept) == 10


def test_past_the_age_the_client_reloads() -> None:
    made, now = feed(window_seconds=300)
    ids = tell(made, 2)
    now[0] += 301
    assert made.since(ids[0]) is None
    assert made.since(ids[1]) == []  # the newest told is still where the feed is


def test_an_id_ahead_of_the_feed_or_before_the_run_reloads() -> None:
    made, _ = feed()
    tell(made, 2)
    assert made.since(made.last_id + 1) is None
    assert made.since(0) is None


def test_every_change_is_told_once_numbered() -> None:
    made, _ = feed()
    heard: list[int] = []
    made.told.listen(lambda change: heard.append(change.id))
    assert tell(made, 3) == heard
