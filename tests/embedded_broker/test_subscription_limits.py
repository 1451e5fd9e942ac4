"""Subscriptions cost the shared writer a bounded amount of work (#23).

One SUBSCRIBE listing 6,000 filters once stored the whole session again after each
filter (6,000 writes, each holding every filter so far: quadratic), and an HTTP write
queued meanwhile waited 19 seconds behind them. Now a packet is stored once, a session
holds at most `mqtt_max_subscriptions` filters (SUBACK 0x80 for the rest, MQTT 3.1.1),
and a client sending SUBSCRIBE after SUBSCRIBE has at most two writes of its session
waiting at a time. Assertions are on the writes made, not on time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from tests.embedded_broker import packets
from tests.embedded_broker.conftest import Harness

REFUSED = 0x80


@pytest.fixture
def saves(broker: Harness, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Every write of a session's subscriptions the broker queues (not those of a session
    starting or its client going away, which store its messages too): (subscriptions,
    bytes of their JSON)."""
    store = broker.mqtt.router.sessions
    made: list[tuple[int, int]] = []
    original = store.save

    def counted(sessions: Sequence[Any], replace_messages: bool) -> Any:
        for session in sessions:
            if not replace_messages:
                made.append((len(session.subscriptions), len(json.dumps(session.subscriptions))))
        return original(sessions, replace_messages)

    monkeypatch.setattr(store, "save", counted)
    return made


def stored_filters(broker: Harness, key: str) -> dict[str, int]:
    rows = broker.site.services.db.read(
        lambda c: c.execute(
            "SELECT subscriptions FROM mqtt_sessions WHERE session_key = ?", (key,)
        ).fetchall()
    )
    return json.loads(rows[0][0]) if rows else {}


async def test_thousands_of_filters_in_one_subscribe_are_one_bounded_write(
    broker: Harness, saves: list[tuple[int, int]]
) -> None:
    device = await broker.device("greedy")
    client = broker.client("greedy", **device.login, clean=False)
    assert await client.connect() == (0, False)
    status, reply = await broker.call("POST", "/v2/groups", json={"name": "Ward"})
    assert status == 201, reply
    group_id = reply["group"]["id"]
    wanted = [(f"{device.root}/sensors/filter-{n}", 1) for n in range(6000)]  # ~190 KB
    granted, (status, reply) = await asyncio.gather(
        client.subscribe_many(wanted),
        broker.call("PUT", f"/v2/groups/{group_id}/data/meanwhile", json={"value": 1}),
    )
    assert status == 200, reply  # the data PUT made meanwhile went through
    assert granted == [1] * 500 + [REFUSED] * 5500
    key = f"{device.id}:greedy"
    await broker.until(lambda: len(stored_filters(broker, key)) == 500)
    assert [count for count, _ in saves] == [500]  # one write for the packet
    assert saves[0][1] < 500 * 64  # of the 500 filters held, not of the 6,000 asked
    assert broker.stats.refused_subscriptions == 5500


@pytest.mark.world(mqtt_max_subscriptions=3)
async def test_a_session_holds_at_most_max_subscriptions(broker: Harness) -> None:
    device = await broker.device("dev1")
    client = await broker.connected(device, "c")
    root = f"{device.root}/sensors"
    assert await client.subscribe_many([(f"{root}/a", 1), (f"{root}/b", 1)]) == [1, 1]
    assert await client.subscribe_many([(f"{root}/c", 1), (f"{root}/d", 1)]) == [1, REFUSED]
    assert await client.subscribe(f"{root}/a", 0) == 0  # a filter held may change its QoS
    client.paho.unsubscribe(f"{root}/a")
    assert await client.subscribe(f"{root}/d", 2) == 2  # room again
    publisher = await broker.connected(device, "p")
    await publisher.publish(f"{root}/d", b"to d", 1)
    assert (await client.next_message()).payload == b"to d"


async def test_subscribe_after_subscribe_queues_at_most_two_writes(
    broker: Harness, saves: list[tuple[int, int]]
) -> None:
    """50 SUBSCRIBE packets in one write: each is answered, the session's subscriptions
    are stored in the end, by no more than a write in progress and one after it."""
    device = await broker.device("dev1")
    root = f"{device.root}/sensors"
    burst = packets.connect("burst", device.id, device.api_key, clean=False)
    burst += b"".join(packets.subscribe(n, [(f"{root}/{n}", 1)]) for n in range(1, 51))
    suback = 5  # 0x90, length 3, packet identifier, return code
    received = await asyncio.to_thread(
        packets.exchange, broker.ports["mqtt"], burst, 4 + 50 * suback
    )
    assert received[:4] == b"\x20\x02\x00\x00"
    assert received[4:].count(b"\x90\x03") == 50
    key = f"{device.id}:burst"
    await broker.until(lambda: len(stored_filters(broker, key)) == 50)
    assert 1 <= len(saves) <= 2, saves


async def test_an_identical_subscribe_writes_nothing(
    broker: Harness, saves: list[tuple[int, int]]
) -> None:
    """The same filters at the same QoS again (as a client does after each reconnect) leave
    the stored session as it is: no write. A change of QoS, or a new filter, is written."""
    device = await broker.device("dev1")
    client = broker.client("again", **device.login, clean=False)
    assert await client.connect() == (0, False)
    root = f"{device.root}/sensors"
    key = f"{device.id}:again"
    assert await client.subscribe_many([(f"{root}/a", 1), (f"{root}/b", 0)]) == [1, 0]
    await broker.until(lambda: stored_filters(broker, key) == {f"{root}/a": 1, f"{root}/b": 0})
    assert await client.subscribe_many([(f"{root}/a", 1), (f"{root}/b", 0)]) == [1, 0]
    assert await client.subscribe(f"{root}/b", 0) == 0
    assert await client.subscribe(f"{root}/a", 2) == 2  # a new QoS: written
    await broker.until(lambda: stored_filters(broker, key) == {f"{root}/a": 2, f"{root}/b": 0})
    assert [count for count, _ in saves] == [2, 2]
