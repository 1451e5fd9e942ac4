"""What one account (a device, or a user's tools) may hold in the broker, all its clients
together (#23): persistent sessions, bytes queued for them, bytes retained. One device
once stored 219 MiB through 300 persistent sessions under invented client IDs for 768 KB
published, and retained 500 messages of 200 KB in 2.8 s. Refusals are counted for GET
/metrics and logged without flooding the log."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.api.test_metrics import scrape, value
from tests.embedded_broker.conftest import Harness, start
from tests.embedded_broker.test_retained_and_sessions import stop

IDENTIFIER_REJECTED = 2
QUEUE_BYTES, RETAINED_BYTES = 65536, 1000


pytestmark = pytest.mark.world(
    mqtt_account_sessions=2,
    mqtt_account_queue_bytes=QUEUE_BYTES,
    mqtt_account_retained_bytes=RETAINED_BYTES,
)


async def kept(broker: Harness, device: Any, client_id: str) -> Any:
    """A persistent session of the device, subscribed to its sensors, then left."""
    client = broker.client(client_id, **device.login, clean=False)
    assert (await client.connect())[0] == 0
    assert await client.subscribe(f"{device.root}/sensors/#", 1) == 1
    await client.close()
    return client


async def refusals(broker: Harness, limit: str) -> float:
    staff = await broker.app_api.token()
    return value(
        await scrape(broker.app_api, staff), "edge_mqtt_account_refusals_total", limit=limit
    )


async def test_an_account_keeps_at_most_its_persistent_sessions(broker: Harness) -> None:
    device, other = await broker.device("dev1"), await broker.device("dev2")
    first = await kept(broker, device, "s1")
    await kept(broker, device, "s2")
    third = broker.client("s3", **device.login, clean=False)
    assert (await third.connect())[0] == IDENTIFIER_REJECTED
    assert await refusals(broker, "sessions") == 1
    assert (await first.connect()) == (0, True)  # one it keeps comes back
    await first.close()
    clean = broker.client("s3", **device.login, clean=True)
    assert (await clean.connect())[0] == 0  # a clean session is not kept
    await clean.close()
    await kept(broker, other, "s3")  # another device's count is its own
    ended = broker.client("s1", **device.login, clean=True)
    assert (await ended.connect())[0] == 0  # discards the kept session s1...
    await ended.close()
    await kept(broker, device, "s3")  # ...which makes room


async def test_messages_waiting_for_an_account_stop_at_its_total(
    broker: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    device, other = await broker.device("dev1"), await broker.device("dev2", {})
    for client_id in ("a", "b"):
        await kept(broker, device, client_id)
    publisher = await broker.connected(await broker.device("pub"), "pub")
    topic = f"{device.root}/sensors/t"
    with caplog.at_level(logging.WARNING, "edge.mqtt"):
        for _ in range(4):  # 4 x 2 sessions x 20 KB: 160 KB offered, 64 KiB kept
            await publisher.publish(topic, b"m" * 20_000, 1)
    usage = broker.mqtt.router.accounts.usage(device.id)
    assert 40_000 < usage.queued <= QUEUE_BYTES
    assert broker.stats.dropped_offline == 5 and await refusals(broker, "queue") == 5
    assert caplog.text.count(f"account {device.id} is at its queue limit") == 1
    assert broker.mqtt.router.accounts.usage(other.id).queued == 0
    back = broker.client("a", **device.login, clean=False)
    assert (await back.connect()) == (0, True)
    for _ in range(2):
        assert len((await back.next_message()).payload) == 20_000
    await back.close()  # delivered: no longer waiting
    await broker.until(lambda: usage.queued <= QUEUE_BYTES - 40_000)


async def test_retained_bytes_of_an_account_stop_at_its_total(
    broker: Harness, aiohttp_client: Any
) -> None:
    device = await broker.device("dev1")
    client = await broker.connected(device, "c")
    root = f"{device.root}/sensors"
    await client.publish(f"{root}/a", b"a" * 600, 1, retain=True)
    await client.publish(f"{root}/b", b"b" * 600, 1, retain=True)  # past 1,000: refused
    await client.publish(f"{root}/a", b"A" * 900, 1, retain=True)  # replaces its own 600
    assert await refusals(broker, "retained") == 1
    retained = broker.mqtt.router.retained
    assert retained.held(f"{root}/b") == (None, 0)
    assert retained.held(f"{root}/a") == (device.id, len(f"{root}/a") + 900)
    await stop(broker)
    restarted = await start(broker.site.services.config.data_dir, aiohttp_client)
    try:  # who retains what is read back with the messages
        usage = restarted.mqtt.router.accounts.usage(device.id)
        assert usage.retained == len(f"{root}/a") + 900
        again = await restarted.connected(device, "c")
        await again.publish(f"{root}/b", b"b" * 600, 1, retain=True)  # still past it
        await again.publish(f"{root}/a", b"", 1, retain=True)  # cleared: its bytes are free
        await again.publish(f"{root}/b", b"b" * 600, 1, retain=True)
        assert restarted.mqtt.router.retained.held(f"{root}/b")[0] == device.id
        assert usage.retained == len(f"{root}/b") + 600
    finally:
        restarted.stop_clients()


async def test_a_live_client_is_not_cut_off_for_what_its_offline_sessions_hold(
    broker: Harness,
) -> None:
    """The account's total guards the disk, which offline sessions write to: with the
    total held by sessions left behind, a connected client of the same account whose
    in-flight window is full still queues, within its own session's bounds (it was
    disconnected as 'a slow client' at once, and again after every reconnect)."""
    device = await broker.device("dev1")
    for client_id in ("a", "b"):
        await kept(broker, device, client_id)
    publisher = await broker.connected(await broker.device("pub"), "pub")
    topic = f"{device.root}/sensors/t"
    for _ in range(4):  # the offline sessions take the account's whole total
        await publisher.publish(topic, b"m" * 20_000, 1)
    live = await broker.connected(device, "live")
    assert await live.subscribe(topic, 1) == 1
    live.stall()  # reads nothing more: its in-flight window fills, then its queue
    session = broker.session(device.id, "live")
    for n in range(120):  # past the 100 messages in flight
        await publisher.publish(topic, b"%03d" % n, 1)
    await broker.until(lambda: len(session.waiting) > 0)
    assert session.link is not None and broker.stats.slow_disconnects == 0
