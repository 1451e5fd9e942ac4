"""A client ID taken over (MQTT-3.1.4-2) while other CONNECTs with the same ID race for it:
one connection holds the ID at the end, revocation reaches every live connection, and no
CONNECT waits forever for a holder (embedded_broker/turns.py, `EdgeBroker._turn`). The
races are real: raw CONNECT packets sent at once on real sockets to the real broker."""

from __future__ import annotations

import asyncio

import pytest

from embedded_broker import broker as broker_module
from embedded_broker.broker import EdgeBroker
from embedded_broker.handler import EdgeHandler
from tests.embedded_broker import packets
from tests.embedded_broker.conftest import Device, Harness

CONNACK, UNAVAILABLE = b"\x20\x02", 3
PINGREQ, PINGRESP = b"\xc0\x00", b"\xd0\x00"
Raw = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def raw(broker: Harness, device: Device, clean: bool) -> Raw:
    """A connection that has sent its CONNECT with client ID "same"."""
    reader, writer = await asyncio.open_connection("127.0.0.1", broker.ports["mqtt"])
    writer.write(packets.connect("same", device.id, device.api_key, clean=clean))
    await writer.drain()
    return reader, writer


async def racing(broker: Harness, device: Device, clean: bool) -> list[Raw]:
    """Two CONNECTs sent at once while a third connection holds the client ID."""
    holder = await broker.connected(device, "same", clean=clean)
    both = list(await asyncio.gather(raw(broker, device, clean), raw(broker, device, clean)))
    await holder.disconnected()
    return both


async def connack(reader: asyncio.StreamReader) -> int:
    """The CONNACK's return code."""
    got = await asyncio.wait_for(reader.readexactly(4), 20)
    assert got[:2] == CONNACK
    return got[3]


async def answer(connection: Raw) -> tuple[int, bytes]:
    """The CONNACK's code, then the answer to a PINGREQ (b"" once the broker closed it)."""
    reader, writer = connection
    code = await connack(reader)
    writer.write(PINGREQ)
    return code, await asyncio.wait_for(reader.read(2), 20)


def close(connections: list[Raw]) -> None:
    for _, writer in connections:
        writer.close()


def core(broker: Harness) -> EdgeBroker:
    assert broker.mqtt.broker is not None
    return broker.mqtt.broker


def holders(broker: Harness, device: Device) -> list[EdgeHandler]:
    key = f"{device.id}:same"
    return [h for h in core(broker).connections if h.client_session.key == key]


@pytest.mark.parametrize("clean", [True, False])
async def test_two_connects_racing_a_takeover_leave_one_holder(
    broker: Harness, clean: bool
) -> None:
    device = await broker.device("pump")
    raced = await racing(broker, device, clean)
    answers = sorted([await answer(c) for c in raced])
    close(raced)
    # the first is accepted, then taken over by the second, which stays
    assert answers == [(0, b""), (0, PINGRESP)]
    assert len(holders(broker, device)) == 1
    assert core(broker).turns.waiting() == 0
    again = await broker.connected(device, "same", clean=clean)  # an honest reconnect
    assert await again.subscribe(f"{device.root}/devices/{device.id}/commands/+", 1) == 1


@pytest.mark.parametrize("how", ["reset", "suspend"])
async def test_revocation_reaches_every_connection_of_a_raced_client_id(
    broker: Harness, how: str
) -> None:
    device = await broker.device("pump")
    raced = await racing(broker, device, True)
    for reader, _ in raced:
        assert await connack(reader) == 0
    await (broker.reset_api_key(device) if how == "reset" else broker.suspend(device))
    core(broker).recheck()
    for reader, writer in raced:  # each closed by the broker: nothing more to read
        writer.write(PINGREQ)
        assert await asyncio.wait_for(reader.read(2), 20) == b""
    close(raced)


async def test_recheck_drops_a_live_connection_missing_from_the_session_table(
    broker: Harness,
) -> None:
    """Whatever put a connection outside the table (one entry per client ID), it does not
    outlive its credentials."""
    device = await broker.device("pump")
    client = await broker.connected(device, "same")
    del core(broker)._sessions[f"{device.id}:same"]
    await broker.suspend(device)
    assert core(broker).recheck() == 1
    await client.disconnected()


@pytest.mark.world(mqtt_max_connections=6)
async def test_connections_abandoned_after_a_race_end_and_free_their_slots(
    broker: Harness,
) -> None:
    device = await broker.device("pump")
    bystander = await broker.device("bystander", other_org=True)
    raced = await racing(broker, device, False)
    for _ in range(6):  # a client retrying with the same client ID, giving up each time
        reader, writer = await raw(broker, device, False)
        writer.close()
    close(raced)
    await broker.until(lambda: core(broker).live == 0)
    assert core(broker).turns.waiting() == 0
    await broker.connected(bystander, "b")


async def test_a_holder_that_does_not_end_gets_the_new_connect_refused(
    broker: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A holder that ignores being taken over (here its `end` does nothing) does not keep
    the new CONNECT waiting past TAKEOVER_SECONDS: CONNACK 3, and the ID's turn is free."""
    monkeypatch.setattr(broker_module, "TAKEOVER_SECONDS", 0.2)
    device = await broker.device("pump")
    holder = await broker.connected(device, "same")
    (stuck,) = holders(broker, device)
    monkeypatch.setattr(stuck, "end", lambda reason, cause="": None)
    reader, writer = await raw(broker, device, True)
    assert await connack(reader) == UNAVAILABLE
    writer.close()
    assert core(broker).turns.waiting() == 0
    assert holders(broker, device) == [stuck]
    await holder.close()
