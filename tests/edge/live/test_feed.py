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
    assert made.since("org", 3 * RUN_SPAN + 2) is None  # the earlier run's window is gone


def test_since_resumes_within_the_window() -> None:
    made, _ = feed()
    ids = tell(made, 5)
    resumed = made.since("org", ids[1])
    assert resumed is not None and [c.id for c in resumed] == ids[2:]
    assert made.since("org", ids[-1]) == []
    assert made.since("org", made.last_id("org")) == []


def test_from_the_run_start_nothing_is_missed() -> None:
    made, _ = feed()
    first = made.last_id("org")
    ids = tell(made, 3)
    resumed = made.since("org", first)
    assert resumed is not None and [c.id for c in resumed] == ids


def test_past_the_count_the_client_reloads() -> None:
    made, _ = feed(count=10)
    ids = tell(made, 12)  # the first two left the window
    assert made.since("org", ids[0]) is None
    kept = made.since("org", ids[1])  # everything after it is still there
    assert kept is not None and len(kept) == 10


def test_past_the_age_the_client_reloads() -> None:
    made, now = feed(window_seconds=300)
    ids = tell(made, 2)
    now[0] += 301
    assert made.since("org", ids[0]) is None
    assert made.since("org", ids[1]) == []  # the newest told is still where the feed is


def test_an_id_ahead_of_the_feed_or_before_the_run_reloads() -> None:
    made, _ = feed()
    tell(made, 2)
    assert made.since("org", made.last_id("org") + 1) is None
    assert made.since("org", 0) is None


def test_every_change_is_told_once_numbered() -> None:
    made, _ = feed()
    heard: list[int] = []
    made.told.listen(lambda change: heard.append(change.id))
    assert tell(made, 3) == heard


def test_each_organization_numbers_its_own_changes() -> None:
    made, _ = feed()
    ours = tell(made, 2)
    theirs = [made.publish("data", "elsewhere", "g", f"/q{i}", {}).id for i in range(5)]
    ours += tell(made, 1)
    assert ours == [3 * RUN_SPAN + n for n in (1, 2, 3)]  # no gap for the other's five
    assert theirs == [3 * RUN_SPAN + n for n in range(1, 6)]
    assert made.last_id("org") == ours[-1] and made.last_id("elsewhere") == theirs[-1]
    assert made.last_id("quiet") == 3 * RUN_SPAN
    resumed = made.since("org", ours[1])
    assert resumed is not None and [(c.org_id, c.id) for c in resumed] == [("org", ours[-1])]


def test_an_organization_whose_changes_left_the_window_reloads() -> None:
    made, _ = feed(count=10)
    ours = tell(made, 2)
    for i in range(9):  # another organization's changes push one of ours out
        made.publish("data", "elsewhere", "g", f"/q{i}", {})
    assert made.since("org", ours[0] - 1) is None
    kept = made.since("org", ours[0])
    assert kept is not None and [c.id for c in kept] == [ours[1]]
