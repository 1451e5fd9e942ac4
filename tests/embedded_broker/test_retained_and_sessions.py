"""Retained messages and persistent sessions, as MQTT 3.1.1 describes them; a retained
QoS 1 message acknowledged before a crash is there after the restart."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from embedded_broker.frames import Message
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
    restarted = await start(copy, aiohttp_client)  # the same org and device
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


async def stop(harness: Harness) -> None:
    """Stop the server as SIGTERM does: the app's cleanup stops the broker, then the
    database is closed."""
    harness.stop_clients()
    await harness.app_api.client.close()


def stored_messages(harness: Harness, key: str) -> list[tuple[str, bytes]]:
    return harness.site.services.db.read(
        lambda c: [
            (topic, bytes(payload))
            for topic, payload in c.execute(
                "SELECT topic, payload FROM mqtt_session_messages WHERE session_key = ?"
                " ORDER BY seq",
                (key,),
            )
        ]
    )


async def test_a_persistent_session_survives_a_restart(
    broker: Harness, aiohttp_client: Any
) -> None:
    """Subscriptions and the QoS 1 and 2 messages queued while the client was away are
    there after the server stops and starts again (MQTT 3.1.1, 3.1.2.4)."""
    device = await broker.device("dev1")
    keeper = broker.client("keeper", **device.login, clean=False)
    assert await keeper.connect() == (0, False)
    assert await keeper.subscribe(f"{device.root}/sensors/one", 1) == 1
    assert await keeper.subscribe(f"{device.root}/sensors/two/#", 2) == 2
    await keeper.close()
    publisher = await broker.connected(device, "pub")
    await publisher.publish(f"{device.root}/sensors/one", b"first", 1)
    await publisher.publish(f"{device.root}/sensors/two/x", b"second", 2)
    await publisher.publish(f"{device.root}/sensors/one", b"qos0 is not kept", 0)
    await stop(broker)
    data_dir = broker.site.services.config.data_dir
    restarted = await start(data_dir, aiohttp_client)
    try:
        back = restarted.client("keeper", **device.login, clean=False)
        assert await back.connect() == (0, True)  # session present
        got = [await back.next_message() for _ in range(2)]
        assert [(m.payload, m.qos) for m in got] == [(b"first", 1), (b"second", 2)]
        publisher = await restarted.connected(device, "pub")
        await publisher.publish(f"{device.root}/sensors/two/y", b"after", 1)  # subscribed still
        assert (await back.next_message()).payload == b"after"  # the QoS 0 one never came
        key = f"{device.id}:keeper"
        await back.close()  # everything acknowledged: nothing is stored as waiting
        await restarted.until(lambda: stored_messages(restarted, key) == [])
        fresh = restarted.client("keeper", **device.login, clean=True)
        assert await fresh.connect() == (0, False)  # a clean session discards it
        await restarted.until(
            lambda: (
                not restarted.site.services.db.read(
                    lambda c: c.execute(
                        "SELECT 1 FROM mqtt_sessions WHERE session_key = ?", (key,)
                    ).fetchall()
                )
            )
        )
    finally:
        restarted.stop_clients()


async def test_a_message_queued_for_an_absent_client_is_stored_before_its_puback(
    broker: Harness, aiohttp_client: Any, tmp_path: Path
) -> None:
    device = await broker.device("dev1")
    keeper = broker.client("keeper", **device.login, clean=False)
    assert await keeper.connect() == (0, False)
    assert await keeper.subscribe(f"{device.root}/sensors/#", 1) == 1
    await keeper.close()
    publisher = await broker.connected(device, "pub")
    await publisher.publish(f"{device.root}/sensors/t", b"acknowledged", 1)  # PUBACK'd
    copy = tmp_path / "after-crash"  # the data folder as a power cut would leave it now
    shutil.copytree(
        broker.site.services.config.data_dir, copy, ignore=shutil.ignore_patterns("*.lock")
    )
    restarted = await start(copy, aiohttp_client)
    try:
        back = restarted.client("keeper", **device.login, clean=False)
        assert await back.connect() == (0, True)
        got = await back.next_message()
        assert (got.topic, got.payload, got.qos) == (f"{device.root}/sensors/t", b"acknowledged", 1)
    finally:
        restarted.stop_clients()


@pytest.mark.world(mqtt_queue_messages=3)
async def test_the_stored_queue_of_a_session_is_bounded(
    broker: Harness, aiohttp_client: Any
) -> None:
    device = await broker.device("dev1")
    keeper = broker.client("keeper", **device.login, clean=False)
    assert await keeper.connect() == (0, False)
    assert await keeper.subscribe(f"{device.root}/sensors/#", 1) == 1
    await keeper.close()
    publisher = await broker.connected(device, "pub")
    for n in range(5):
        await publisher.publish(f"{device.root}/sensors/t", b"m%d" % n, 1)
    assert broker.stats.dropped_offline == 2
    assert len(stored_messages(broker, f"{device.id}:keeper")) == 3
    await stop(broker)
    restarted = await start(broker.site.services.config.data_dir, aiohttp_client)
    try:
        back = restarted.client("keeper", **device.login, clean=False)
        assert await back.connect() == (0, True)
        got = [(await back.next_message()).payload for _ in range(3)]
        assert got == [b"m0", b"m1", b"m2"]
        await publisher_marker(restarted, device, back)
    finally:
        restarted.stop_clients()


async def publisher_marker(harness: Harness, device: Any, subscriber: Any) -> None:
    """The next message the subscriber gets is a marker published now: nothing else was
    left queued for it."""
    publisher = await harness.connected(device, "marker")
    await publisher.publish(f"{device.root}/sensors/marker", b"marker", 1)
    assert (await subscriber.next_message()).payload == b"marker"


async def test_a_stored_session_whose_key_was_reset_is_not_restored(
    broker: Harness, aiohttp_client: Any
) -> None:
    device = await broker.device("dev1")
    keeper = broker.client("keeper", **device.login, clean=False)
    assert await keeper.connect() == (0, False)
    assert await keeper.subscribe(f"{device.root}/sensors/#", 1) == 1
    await keeper.close()
    await stop(broker)
    data_dir = broker.site.services.config.data_dir
    no_mqtt = {"mqtt_port": 0, "mqtt_tls_port": 0, "mqtt_ws_port": 0, "mqtt_wss_port": 0}
    http_only = await start(data_dir, aiohttp_client, **no_mqtt)
    http_only.orgs = broker.orgs  # the same admins, signed in before the restart
    await http_only.reset_api_key(device)  # while no broker runs to drop anything
    await stop(http_only)
    restarted = await start(data_dir, aiohttp_client)
    try:
        key = f"{device.id}:keeper"
        assert restarted.session(device.id, "keeper") is None
        await restarted.until(
            lambda: (
                not restarted.site.services.db.read(
                    lambda c: c.execute(
                        "SELECT 1 FROM mqtt_sessions WHERE session_key = ?", (key,)
                    ).fetchall()
                )
            )
        )
        back = restarted.client("keeper", **device.login, clean=False)
        assert await back.connect() == (0, False)  # the new key: no session kept
    finally:
        restarted.stop_clients()


async def test_retained_messages_on_reserved_topics_never_reach_a_subscriber(
    broker: Harness, aiohttp_client: Any
) -> None:
    """Messages retained on topics #29 reserved, before they were (a user tool or another
    device with rights over the root could publish there), are skipped at start and never
    matched: a forged command or delta does not reach the device (#29 F4)."""
    device = await broker.device("pump")
    base = f"{device.root}/devices/{device.id}"
    forged = {
        f"{base}/commands/evil": b'{"request_id": "evil", "name": "unlock", "payload": {}}',
        f"{base}/twin/update/delta": b'{"delta": {"door": "open"}, "version": 99}',
        f"{base}/twin/update": b'{"reported": {"door": "open"}}',
    }

    def old_broker_wrote(conn: Any) -> None:
        for topic, payload in [*forged.items(), (f"{base}/status", b"kept")]:
            conn.execute(
                "INSERT INTO mqtt_retained (topic, payload, qos, updated_at, account_id)"
                " VALUES (?, ?, 1, '2026-01-01T00:00:00Z', NULL)",
                (topic, payload),
            )

    await broker.site.services.db.write(old_broker_wrote)
    await stop(broker)
    restarted = await start(broker.site.services.config.data_dir, aiohttp_client)
    retained = restarted.mqtt.router.retained
    assert len(retained) == 1  # the status only
    # residue in memory too (as a broker that kept running would hold): never matched
    residue = f"{base}/commands/residue"
    await retained.set(Message.of(residue, b'{"request_id": "r"}', 1), None)
    client = await restarted.connected(device, "d")
    assert await client.subscribe(f"{base}/#", 1) == 1
    await client.publish(f"{base}/status", b"live", 1)  # after every retained message
    got = []
    while not got or got[-1].payload != b"live":
        got.append(await client.next_message())
    assert [(m.topic, m.payload) for m in got] == [
        (f"{base}/status", b"kept"),
        (f"{base}/status", b"live"),
    ]
    assert not set(forged) & {m.topic for m in got}
