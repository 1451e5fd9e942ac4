"""Topics and filters have at most 128 levels and 1,024 bytes (embedded_broker/acl.py), and
topic trees are walked without recursion (#23).

A retained message on a topic 1,500 levels deep, published by a device under its own
scope, raised RecursionError for every subscriber whose `#` filter covered it (the
connection dropped), and, stored in the database, did it again after every restart."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from embedded_broker.retained import RetainedMessages
from storage import mqtt_retained
from tests.embedded_broker.conftest import Harness, start
from tests.embedded_broker.test_retained_and_sessions import stop

REFUSED = 0x80


def deep(root: str, levels: int) -> str:
    return f"{root}/sensors/" + "/".join(["x"] * levels)


async def test_a_topic_too_deep_is_refused_and_cuts_off_no_subscriber(
    broker: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    device = await broker.device("dev1")
    publisher = await broker.connected(device, "pub")
    with caplog.at_level(logging.WARNING, "edge.mqtt"):
        await publisher.publish(deep(device.root, 1500), b"deep", 1, retain=True)  # PUBACK'd
    assert broker.stats.refused_publishes == 1
    assert "more than 128 levels" in caplog.text
    assert len(broker.mqtt.router.retained) == 0  # not kept
    await publisher.publish(f"{device.root}/sensors/a", b"kept", 1, retain=True)
    subscriber = await broker.connected(device, "sub")
    assert await subscriber.subscribe(f"{device.root}/sensors/#", 1) == 1
    assert (await subscriber.next_message()).payload == b"kept"
    await publisher.publish(f"{device.root}/sensors/b", b"live", 1)
    assert (await subscriber.next_message()).payload == b"live"  # still connected


async def test_the_deepest_topic_allowed_is_retained_and_matched(broker: Harness) -> None:
    device = await broker.device("dev1")
    topic = deep(device.root, 126)  # root (1 level), sensors, 126 more: 128 levels
    publisher = await broker.connected(device, "pub")
    await publisher.publish(topic, b"deepest", 1, retain=True)
    subscriber = await broker.connected(device, "sub")
    assert await subscriber.subscribe(f"{device.root}/sensors/#", 1) == 1
    got = await subscriber.next_message()
    assert (got.topic, got.payload) == (topic, b"deepest")


@pytest.mark.parametrize(
    "topic_filter", ["{root}/sensors/" + "+/" * 200 + "#", "{root}/sensors/" + "y" * 1100]
)
async def test_a_filter_too_deep_or_too_long_is_refused(broker: Harness, topic_filter: str) -> None:
    device = await broker.device("dev1")
    client = await broker.connected(device, "c")
    assert await client.subscribe(topic_filter.format(root=device.root), 1) == REFUSED
    assert await client.subscribe(f"{device.root}/sensors/#", 1) == 1


async def test_a_stored_retained_message_too_deep_is_skipped_at_start(
    broker: Harness, aiohttp_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """One stored before the limit existed: skipped with a log line; `#` subscribers get
    the others."""
    device = await broker.device("dev1")
    now = "2026-01-01T00:00:00Z"
    for topic, payload in ((deep(device.root, 1500), b"deep"), (f"{device.root}/sensors/a", b"a")):
        record = mqtt_retained.RetainedRecord(topic, payload, 1)
        await broker.site.services.db.write(lambda c, r=record: mqtt_retained.put(c, r, now))
    await stop(broker)
    with caplog.at_level(logging.WARNING, "edge.mqtt"):
        restarted = await start(broker.site.services.config.data_dir, aiohttp_client)
    try:
        assert "topic over the limits (1502 levels" in caplog.text
        subscriber = await restarted.connected(device, "sub")
        assert await subscriber.subscribe(f"{device.root}/sensors/#", 1) == 1
        assert (await subscriber.next_message()).payload == b"a"
        marker = await restarted.connected(device, "marker")
        await marker.publish(f"{device.root}/sensors/m", b"marker", 1)
        assert (await subscriber.next_message()).payload == b"marker"  # still connected
    finally:
        restarted.stop_clients()


class _Nothing:
    def save(self, topic: str, payload: bytes, qos: int, account_id: str | None) -> Any: ...

    def load(self) -> list[Any]:
        return []


def test_matching_walks_a_deep_tree_without_recursion() -> None:
    """The walk itself: a tree deeper than Python's recursion limit is matched."""
    from embedded_broker.frames import Message

    retained = RetainedMessages(_Nothing())
    topic = "/".join(["x"] * 5000)
    retained.set(Message.of(topic, b"deep", 0), None)
    retained.set(Message.of("x/y", b"near", 0), None)
    assert [m.payload for m in retained.matching("#")] == [b"deep", b"near"]
    assert [m.payload for m in retained.matching("x/+")] == [b"near"]
    assert [m.payload for m in retained.matching(topic)] == [b"deep"]
