"""Retained messages and persistent sessions, as MQTT 3.1.1 describes them; a retained
QoS 1 message acknowledged before a crash is there after the restart."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tests.embedded_broker.conftest import Harness, start


async def test_retained_messages_are_given_to_new_subscriptions(broker: Harness) -> None:
    device = await broker.device("dev1")
    publisher = await broker.connected(device, "pub")
    root = device.root
    await publisher.publish(f"{root}/sensors/a", b"first", 1, retain=True)
    await publisher.publish(f"{root}/sensors/a", b"latest", 1, retain=True)
    await publisher.publish(f"{root}/sensors/b", b"bee", 0, retain=True)
    await publisher.publish(f"{root}/sensors/c", b"", 1, retain=True)  # nothing to clear
    late = await broker.connected(device, "late")
    assert await late.subscribe(f"{root}/sensors/#", 1) == 1
    got = {(m.topic, m.payload, m.qos, m.retain) for m in [await late.next_message() for _ in "ab"]}
    assert got == {
        (f"{root}/sensors/a", b"latest", 1, True),
        (f"{root}/sensors/b", b"bee", 0, True),
    }
    await publisher.publish(f"{root}/sensors/a", b"live", 1, retain=True)
    live = await late.next_message()
    assert (live.payload, live.retain) == (b"live", False)  # MQTT-3.3.1-9
    await publisher.publish(f"{root}/sensors/a", b"", 1, retain=True)  # clears it
    assert (await late.next_message()).payload == b""
    cleared = await broker.connected(device, "cleared")
    assert await cleared.subscribe(f"{root}/sensors/+", 1) == 1
    assert (await cleared.next_message()).topic == f"{root}/sensors/b"  # a is gone
    assert len(broker.mqtt.router.retained) == 1


async def test_a_persistent_session_keeps_subscriptions_and_qos1_messages(broker: Harness) -> None:
    device = await broker.device("dev1")
    topic = f"{device.root}/sensors/t"
    keeper = broker.client("keeper", **device.login, clean=False)
    assert await keeper.connect() == (0, False)
    assert await keeper.subscribe(topic, 1) == 1
    await keeper.close()
    publisher = await broker.connected(device, "pub")
    await publisher.publish(topic, b"while away", 1)
    await publisher.publish(topic, b"qos0 is not kept", 0)
    assert await keeper.connect() == (0, True)  # session present
    got = await keeper.next_message()
    assert (got.payload, got.qos) == (b"while away", 1)
    await publisher.publish(topic, b"back", 1)
    assert (await keeper.next_message()).payload == b"back"  # the QoS 0 one never came
    await keeper.close()
    fresh = broker.client("keeper", **device.login, clean=True)
    assert await fresh.connect() == (0, False)  # a clean session discards the old one
    assert await fresh.subscribe(f"{device.root}/sensors/other", 1) == 1
    await publisher.publish(topic, b"not subscribed any more", 1)
    await publisher.publish(f"{device.root}/sensors/other", b"marker", 1)
    assert (await fresh.next_message()).payload == b"marker"


async def test_a_retained_qos1_message_survives_a_crash(
    broker: Harness, aiohttp_client: Any, tmp_path: Path
) -> None:
    device = await broker.device("dev1")
    publisher = await broker.connected(device, "pub")
    await publisher.publish(f"{device.root}/sensors/state", b"on", 1, retain=True)  # PUBACK'd
    # The data folder as a power cut would leave it right after the PUBACK: the server
    # is still running, nothing was closed or checkpointed.
    copy = tmp_path / "after-crash"
    shutil.copytree(
        broker.site.services.config.data_dir, copy, ignore=shutil.ignore_patterns("*.lock")
    )
    restarted = await start(copy, aiohttp_client, tenants=False)  # the same org and device
    try:
        client = await restarted.connected(device, "sub")
        assert await client.subscribe(f"{device.root}/sensors/#", 1) == 1
        got = await client.next_message()
        assert (got.topic, got.payload, got.qos, got.retain) == (
            f"{device.root}/sensors/state",
            b"on",
            1,
            True,
        )
    finally:
        restarted.stop_clients()
