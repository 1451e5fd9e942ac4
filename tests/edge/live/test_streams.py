"""Open streams (edge/live/streams.py) and what one asks for (selection.py): the fan-out
queues only what the selection matches, a stream that falls `capacity` behind is cut and
holds nothing, and an account holds at most its limit of streams."""

from __future__ import annotations

import pytest

from edge.kernel.principal import Principal
from edge.live.feed import Feed
from edge.live.selection import Selection, under
from edge.live.streams import Streams, TooManyStreams

WHO = Principal("user", "u1", "s1", "org")


def setup(capacity: int = 4, most: int = 2) -> tuple[Feed, Streams]:
    made = Feed(300, 100)
    made.begin(1)
    return made, Streams(made, most, capacity)


def data(made: Feed, path: str, group: str = "g", org: str = "org", operation: str = "put") -> None:
    made.publish("data", org, group, path, {"path": path, "operation": operation})


async def test_a_stream_queues_what_its_selection_matches() -> None:
    made, streams = setup()
    stream = streams.open(WHO, Selection("org", frozenset({"data"}), "g", "/a"))
    data(made, "/a/1")
    data(made, "/b")
    data(made, "/a/2", group="h")
    data(made, "/a/3", org="elsewhere")
    made.publish("presence", "org", "d", None, {"device_id": "d"})
    data(made, "/", operation="delete_below")
    told = await stream.next_batch(0)
    assert [c.path for c in told] == ["/a/1", "/"]


async def test_a_stream_that_falls_behind_is_cut_and_holds_nothing() -> None:
    made, streams = setup(capacity=4)
    stream = streams.open(WHO, Selection("org"))
    for n in range(5):
        data(made, f"/p{n}")
    assert stream.cut
    assert await stream.next_batch(0) == []
    data(made, "/later")  # a cut stream takes nothing more
    assert await stream.next_batch(0) == []


def test_an_account_holds_at_most_its_limit() -> None:
    _, streams = setup(most=2)
    first = streams.open(WHO, Selection("org"))
    streams.open(WHO, Selection("org"))
    with pytest.raises(TooManyStreams):
        streams.open(WHO, Selection("org"))
    streams.open(Principal("user", "u2", "s2", "org"), Selection("org"))
    streams.close(first)
    streams.open(WHO, Selection("org"))
    assert streams.count() == 3


@pytest.mark.parametrize(
    ("path", "prefix", "expected"),
    [("/a", "/", True), ("/a", "/a", True), ("/a/b", "/a", True), ("/ab", "/a", False)],
)
def test_a_prefix_covers_whole_segments(path: str, prefix: str, expected: bool) -> None:
    assert under(path, prefix) is expected
