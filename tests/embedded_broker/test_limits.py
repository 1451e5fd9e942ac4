"""A slow or misbehaving client cannot grow the broker's memory or starve the others:
QoS 0 messages to a client that does not read are dropped once its bytes bound is
reached, a client whose QoS 1 queue fills up is disconnected, and an oversized packet
ends its connection. Assertions are on the broker's counters and state, not on time."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from embedded_broker import inbound
from embedded_broker.inbound import Inbound
from embedded_broker.sessions import ClientSession
from tests.embedded_broker.conftest import Harness

QUEUE_BYTES, QUEUE_MESSAGES = 65536, 10
BIG = b"x" * 32768


pytestmark = pytest.mark.world(
    mqtt_queue_bytes=QUEUE_BYTES, mqtt_queue_messages=QUEUE_MESSAGES, mqtt_max_message_bytes=65536
)


async def stalled(broker: Harness, qos: int) -> Any:
    """A subscriber that stops reading its socket once subscribed."""
    device = await broker.device("slow")
    slow = await broker.connected(device, "slow")
    assert await slow.subscribe(f"{device.root}/sensors/#", qos) == qos
    slow.stall()  # paho's network loop ends: nothing more is read
    return broker.session(device.id, "slow")


async def test_qos0_to_a_client_that_does_not_read_is_dropped_past_the_bound(
    broker: Harness,
) -> None:
    session = await stalled(broker, 0)
    publisher = await broker.connected(await broker.device("fast"), "fast")
    for _ in range(2000):  # until the socket buffers are full and the bound is reached
        await publisher.publish(f"{session.client.root_scope}/sensors/t", BIG, 0)
        if broker.stats.dropped_qos0 >= 20:
            break
    assert broker.stats.dropped_qos0 >= 20
    assert session.link is not None  # still connected: QoS 0 is dropped first
    assert session.link.waiting() <= QUEUE_BYTES + 2 * len(BIG)  # what it may hold


async def test_a_client_whose_qos1_queue_fills_is_disconnected(broker: Harness) -> None:
    session = await stalled(broker, 1)
    publisher = await broker.connected(await broker.device("fast"), "fast")
    for _ in range(2000):
        await publisher.publish(f"{session.client.root_scope}/sensors/t", b"m" * 100, 1)
        if broker.stats.slow_disconnects:
            break
    assert broker.stats.slow_disconnects == 1
    await broker.until(lambda: session.link is None)
    assert len(session.waiting) <= QUEUE_MESSAGES  # what it waited for stayed bounded
    assert await publisher.subscribe(f"{session.client.root_scope}/sensors/x", 0) == 0


async def test_an_oversized_packet_ends_the_connection(broker: Harness) -> None:
    device = await broker.device("dev1")
    client = await broker.connected(device, "big")
    received = broker.stats.received
    client.paho.publish(f"{device.root}/sensors/t", b"x" * 70000, 0)
    await client.disconnected()
    assert broker.stats.received == received  # the packet was never taken as a message
    session = broker.session(device.id, "big")
    assert session is None or session.link is None  # the connection is gone


def silent_client(port: int, username: str, password: str) -> tuple[bytes, bytes]:
    """Connect with a one-second keep-alive, then say nothing: (CONNACK, what follows)."""

    def text(value: bytes) -> bytes:
        return len(value).to_bytes(2, "big") + value

    header = text(b"MQTT") + b"\x04\xc2" + (1).to_bytes(2, "big")
    body = header + text(b"silent") + text(username.encode()) + text(password.encode())
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(bytes((0x10, len(body))) + body)
        connack = sock.recv(4)
        return connack, sock.recv(16)  # returns when the broker closes the connection


async def test_a_client_silent_past_its_keep_alive_is_disconnected(broker: Harness) -> None:
    device = await broker.device("dev1")
    port = broker.ports["mqtt"]
    connack, after = await asyncio.to_thread(silent_client, port, device.id, device.api_key)
    assert connack == b"\x20\x02\x00\x00"
    assert after == b""


async def test_a_client_over_its_rate_is_not_read_until_its_budget_refills(
    broker: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a budget of 10 messages a second, 25 in one read cost a 1.5 s pause before the
    connection is read again (the pause is recorded, not waited for)."""
    pauses: list[float] = []

    async def record(seconds: float) -> None:
        pauses.append(seconds)

    monkeypatch.setattr(inbound, "pause", record)
    device = await broker.device("dev1")
    client = broker.directory.by_api_key(device.id, device.api_key)
    assert client is not None
    session = ClientSession(f"{device.id}:c", client, broker.mqtt.router.limits, broker.stats)
    reader = Inbound(broker.mqtt.router, session, _NoLink(), broker.directory, _nothing)
    reader._rate, reader._tokens = 10, 10.0
    await reader._pace(25, 25)
    assert pauses and 1.4 < pauses[0] <= 1.5
    await reader._pace(0, 0)  # still in debt: pauses again until the budget refills
    assert len(pauses) == 2


class _NoLink:
    def send(self, data: bytes) -> None: ...

    def waiting(self) -> int:
        return 0

    def abort(self) -> None: ...

    def flush(self) -> None: ...


async def _nothing() -> None: ...


def raw_session(port: int, username: str, password: str, packet: bytes) -> bytes:
    """CONNECT, then one raw packet: what the broker sends back until it closes."""

    def text(value: bytes) -> bytes:
        return len(value).to_bytes(2, "big") + value

    header = text(b"MQTT") + b"\x04\xc2" + (30).to_bytes(2, "big")
    body = header + text(b"raw") + text(username.encode()) + text(password.encode())
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(bytes((0x10, len(body))) + body + packet)
        received = b""
        while chunk := sock.recv(64):
            received += chunk
        return received


@pytest.mark.parametrize(
    "packet",
    [
        b"\x30\x01\x00",  # PUBLISH too short for its topic length
        b"\x32\x05\x00\x03a/b",  # QoS 1 without a packet identifier
        b"\x36\x07\x00\x03a/b\x00\x01",  # QoS 3
        b"\x30\x05\x00\x03a/#",  # a wildcard in a topic name
        b"\x30\x04\x00\x02\xff\xfe",  # a topic that is not UTF-8
        b"\x20\x02\x00\x00",  # CONNACK from a client
        b"\x10\x0c\x00\x04MQTT\x04\x02\x00\x1e\x00\x00",  # a second CONNECT
        b"\x82\x02\x00\x01",  # SUBSCRIBE without any filter (MQTT-3.8.3-3)
    ],
)
async def test_protocol_violations_end_the_connection(broker: Harness, packet: bytes) -> None:
    device = await broker.device("dev1")
    port = broker.ports["mqtt"]
    received = await asyncio.to_thread(raw_session, port, device.id, device.api_key, packet)
    assert received.startswith(b"\x20\x02\x00\x00")  # accepted, then closed
    assert len(received) == 4
