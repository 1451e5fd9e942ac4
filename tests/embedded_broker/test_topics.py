"""Topic rights on every PUBLISH and SUBSCRIBE (edge/devices/topics.py decides, the broker
asks) for real devices, and delivery at the lower of the publish and subscription QoS.

A refused PUBLISH is acknowledged and dropped (MQTT 3.1.1 has no negative PUBACK), so
"not delivered" is shown by order: the same client then publishes an allowed message to
the same subscriber, which must be the next one it receives."""

from __future__ import annotations

import pytest

from tests.embedded_broker.conftest import Harness

EVERYTHING = {"/": {"can_publish": True, "can_subscribe": True}}
REFUSED = 128


async def test_publish_and_subscribe_inside_the_scope(broker: Harness) -> None:
    device = await broker.device("dev1")
    client = await broker.connected(device, "c")
    own = f"{device.root}/devices/{device.id}/inbox"
    assert await client.subscribe(f"{device.root}/sensors/#", 1) == 1
    assert await client.subscribe(own, 1) == 1  # a device's own topic, whatever its scopes
    await client.publish(f"{device.root}/sensors/temp", b"21.5", 1)
    await client.publish(own, b"note", 1)
    assert (await client.next_message()).payload == b"21.5"
    assert (await client.next_message()).payload == b"note"


@pytest.mark.parametrize(
    "topic_filter",
    [
        "#",
        "+/#",
        "{org}/#",
        "{org}/+/temp",
        "{org}/+/#",
        "{org}/other/#",
        "{other_org}/sensors/#",
        "$SYS/#",
        "$SYS/broker/uptime",
        "$share/group/{org}/sensors/#",
        "{org}/devices/{other_device}/#",
        "{org}/devices/+/#",
    ],
)
async def test_subscriptions_outside_the_scope_are_refused(
    broker: Harness, topic_filter: str
) -> None:
    device, other = await broker.device("dev1"), await broker.device("dev2")
    names = {"org": broker.org_id, "other_org": broker.other_org_id, "other_device": other.id}
    client = await broker.connected(device, "c")
    assert await client.subscribe(topic_filter.format(**names), 1) == REFUSED
    assert await client.subscribe(f"{device.root}/sensors/#", 1) == 1  # the connection goes on
    assert broker.stats.refused_subscriptions == 1


@pytest.mark.parametrize(
    "topic", ["{org}/other/x", "{org}/sensorsX", "{other_org}/sensors/x", "$SYS/x"]
)
async def test_publishing_outside_the_scope_is_dropped(broker: Harness, topic: str) -> None:
    device, spy = await broker.device("dev1"), await broker.device("spy", EVERYTHING)
    watcher = await broker.connected(spy, "watcher")
    assert await watcher.subscribe(f"{broker.org_id}/#", 1) == 1
    other_org = await broker.device("spy2", EVERYTHING, other_org=True)
    watcher2 = await broker.connected(other_org, "watcher2")
    assert await watcher2.subscribe(f"{broker.other_org_id}/#", 1) == 1
    client = await broker.connected(device, "c")
    names = {"org": broker.org_id, "other_org": broker.other_org_id}
    await client.publish(topic.format(**names), b"secret", 1)  # acknowledged...
    await client.publish(f"{broker.org_id}/sensors/ok", b"marker", 1)
    assert (await watcher.next_message()).payload == b"marker"  # ...but never delivered
    assert watcher2.messages.empty()
    assert broker.stats.refused_publishes == 1


@pytest.mark.parametrize(
    ("publish_qos", "subscribe_qos", "delivered_qos"),
    [(1, 0, 0), (0, 1, 0), (2, 1, 1), (1, 2, 1), (2, 2, 2), (0, 2, 0)],
)
async def test_delivery_at_the_lower_qos(
    broker: Harness, publish_qos: int, subscribe_qos: int, delivered_qos: int
) -> None:
    device = await broker.device("dev1")
    subscriber = await broker.connected(device, "sub")
    assert await subscriber.subscribe(f"{device.root}/sensors/q", subscribe_qos) == subscribe_qos
    publisher = await broker.connected(device, "pub")
    await publisher.publish(f"{device.root}/sensors/q", b"m", publish_qos)
    got = await subscriber.next_message()
    assert (got.payload, got.qos) == (b"m", delivered_qos)


async def test_overlapping_subscriptions_deliver_once_at_the_highest_qos(broker: Harness) -> None:
    device = await broker.device("dev1")
    subscriber = await broker.connected(device, "sub")
    assert await subscriber.subscribe(f"{device.root}/sensors/#", 0) == 0
    assert await subscriber.subscribe(f"{device.root}/sensors/+", 1) == 1
    publisher = await broker.connected(device, "pub")
    await publisher.publish(f"{device.root}/sensors/x", b"one", 1)
    await publisher.publish(f"{device.root}/sensors/x/y", b"two", 1)
    assert (await subscriber.next_message()).qos == 1
    assert (await subscriber.next_message()).payload == b"two"  # "one" came once


async def test_unsubscribing_stops_delivery(broker: Harness) -> None:
    device = await broker.device("dev1")
    client = await broker.connected(device, "c")
    assert await client.subscribe(f"{device.root}/sensors/a", 1) == 1
    assert await client.subscribe(f"{device.root}/sensors/b", 1) == 1
    client.paho.unsubscribe(f"{device.root}/sensors/a")
    await client.publish(f"{device.root}/sensors/a", b"gone", 1)
    await client.publish(f"{device.root}/sensors/b", b"kept", 1)
    assert (await client.next_message()).payload == b"kept"
