"""The broker under a full disk (tests/faults/disk.py): a retained message at QoS 1 that
cannot be stored is not acknowledged (the broker closes the connection), and once space
returns the publisher's client sends it again and it is stored and acknowledged, without
a restart."""

from __future__ import annotations

import asyncio

from tests.embedded_broker.clients import _wait
from tests.embedded_broker.conftest import Harness, broker  # noqa: F401
from tests.faults.disk import FULL, Disk, disk  # noqa: F401


def retained(harness: Harness) -> list[tuple[str, bytes]]:
    return harness.site.services.db.read(
        lambda c: c.execute("SELECT topic, payload FROM mqtt_retained").fetchall()
    )


async def test_a_retained_message_that_cannot_be_stored_is_not_acknowledged(
    disk: Disk,  # noqa: F811 (before the server opens its database)
    broker: Harness,  # noqa: F811 (tests/embedded_broker/conftest.py's)
) -> None:
    device = await broker.device("dev1")
    publisher = await broker.connected(device, "pub")
    topic = f"{device.root}/sensors/kept"
    disk.fault = FULL
    info = publisher.paho.publish(topic, b"while full", 1, retain=True)
    assert await _wait(publisher.gone.wait, 30)  # closed, with no PUBACK
    await asyncio.sleep(0.2)
    assert not info.is_published() and retained(broker) == []
    disk.fault = None  # paho connects again and sends the message again
    await _wait(info.wait_for_publish, 30)  # paho waits 1 s, then 2, 4... to connect again
    assert info.is_published()
    assert retained(broker) == [(topic, b"while full")]
