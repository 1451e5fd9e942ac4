"""The server's own QoS 1 messages to a device (notify-next, a request's answer, any
notice of `MqttService.notify_device`) and the device's PUBACKs of them, read and
answered with raw MQTT packets on a real socket: each kept until acknowledged and sent
again with DUP when a persistent session comes back, at most MAX_INFLIGHT of them
unacknowledged and the rest waiting in order, packet identifiers never shared by two in
flight and free again once acknowledged; and a request's answer leaving with the
request's PUBACK in one write (#31).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from embedded_broker import frames, sessions
from embedded_broker.links import TcpWriter
from embedded_broker.sessions import ClientSession
from tests.embedded_broker import packets
from tests.embedded_broker.clients import WAIT
from tests.embedded_broker.conftest import Device, Harness

Raw = tuple[asyncio.StreamReader, asyncio.StreamWriter]


def notices(device: Device) -> str:
    return f"{device.root}/devices/{device.id}/jobs/notify-next"


async def raw_device(broker: Harness, device: Device, present: bool = False) -> Raw:
    """A persistent session of the device (client ID "d") subscribed at QoS 1 to its
    notices; `present`: the session was kept from before (CONNACK's flag), subscription
    and all (what was in flight comes at once, before any SUBACK)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", broker.ports["mqtt"])
    login = device.login
    writer.write(packets.connect("d", login["username"], login["password"], clean=False))
    assert await reader.readexactly(4) == b"\x20\x02" + bytes((int(present), 0))
    if present:
        return reader, writer
    writer.write(packets.subscribe(1, [(f"{device.root}/devices/{device.id}/jobs/#", 1)]))
    assert await reader.readexactly(5) == b"\x90\x03\x00\x01\x01"
    return reader, writer


async def next_packet(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """The next packet read: its first byte and its body."""

    async def read() -> tuple[int, bytes]:
        first, size, shift = (await reader.readexactly(1))[0], 0, 0
        while (byte := (await reader.readexactly(1))[0]) & 0x80:
            size, shift = size | (byte & 0x7F) << shift, shift + 7
        return first, await reader.readexactly(size | byte << shift)

    return await asyncio.wait_for(read(), WAIT)


async def next_publish(reader: asyncio.StreamReader) -> tuple[int, bool, bytes]:
    """The next PUBLISH (QoS 1): its packet identifier, its DUP flag and its payload."""
    first, body = await next_packet(reader)
    assert first >> 4 == frames.PUBLISH and (first >> 1) & 3 == 1, hex(first)
    end = 2 + int.from_bytes(body[:2], "big")
    return int.from_bytes(body[end : end + 2], "big"), bool(first & 0x08), body[end + 2 :]


def puback(writer: asyncio.StreamWriter, packet_id: int) -> None:
    writer.write(frames.ack(frames.PUBACK, packet_id.to_bytes(2, "big")))


def session_of(broker: Harness, device: Device) -> ClientSession:
    session = broker.session(device.id, "d")
    assert session is not None
    return session


def notify(broker: Harness, device: Device, *payloads: bytes) -> None:
    for payload in payloads:
        assert broker.mqtt.notify_device(device.id, notices(device), payload) == 1


async def test_a_notice_left_unacknowledged_comes_again_with_dup_on_reconnect(
    broker: Harness,
) -> None:
    device = await broker.device("pump")
    reader, writer = await raw_device(broker, device)
    notify(broker, device, b'{"n": 1}', b'{"n": 2}')
    first_id, dup, payload = await next_publish(reader)
    assert (dup, payload) == (False, b'{"n": 1}')
    second_id, dup, payload = await next_publish(reader)
    assert (dup, payload) == (False, b'{"n": 2}') and second_id != first_id
    puback(writer, first_id)  # only the first: the second is still the server's to send
    await broker.until(lambda: list(session_of(broker, device).inflight) == [second_id])
    writer.close()
    await broker.until(lambda: session_of(broker, device).link is None)
    reader, writer = await raw_device(broker, device, present=True)
    try:
        assert await next_publish(reader) == (second_id, True, b'{"n": 2}')
        puback(writer, second_id)
        await broker.until(lambda: not session_of(broker, device).inflight)
        notify(broker, device, b'{"n": 3}')  # and nothing of the acknowledged ones again
        assert (await next_publish(reader))[1:] == (False, b'{"n": 3}')
    finally:
        writer.close()


async def test_past_the_in_flight_limit_notices_wait_and_follow_in_order(
    broker: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sessions, "MAX_INFLIGHT", 2)
    device = await broker.device("pump")
    reader, writer = await raw_device(broker, device)
    try:
        notify(broker, device, *(b"%d" % n for n in range(5)))
        session = session_of(broker, device)
        assert (len(session.inflight), len(session.waiting)) == (2, 3)
        ids = [await next_publish(reader) for _ in range(2)]
        assert [payload for _, _, payload in ids] == [b"0", b"1"]
        received = []
        for n in range(5):
            puback(writer, ids[n][0])  # each PUBACK lets one more go out, in order
            if n + 2 < 5:
                ids.append(await next_publish(reader))
                received.append(ids[-1][2])
                assert (len(session.inflight), len(session.waiting)) == (2, 2 - n)
        assert received == [b"2", b"3", b"4"]
        await broker.until(lambda: not session.inflight and not session.waiting)
        assert broker.stats.slow_disconnects == 0
    finally:
        writer.close()


async def test_packet_ids_in_flight_are_never_shared_and_are_reused_once_acknowledged(
    broker: Harness,
) -> None:
    device = await broker.device("pump")
    reader, writer = await raw_device(broker, device)
    try:
        session = session_of(broker, device)
        session._last_id = 65533  # the identifiers about to wrap: 65534, 65535, then 1
        notify(broker, device, b"a", b"b", b"c")
        assert [(await next_publish(reader))[0] for _ in range(3)] == [65534, 65535, 1]
        puback(writer, 65535)
        await broker.until(lambda: sorted(session.inflight) == [1, 65534])
        session._last_id = 65533  # next in line: 65534, still in flight, so 65535 (free)
        notify(broker, device, b"d")
        assert await next_publish(reader) == (65535, False, b"d")
        session._last_id = 0  # next in line: 1, still in flight, so 2
        notify(broker, device, b"e")
        assert await next_publish(reader) == (2, False, b"e")
    finally:
        writer.close()


class _CountedTransport:
    """The link's transport, its writes counted (everything else its own)."""

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)
        self._transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


async def test_a_requests_answer_and_its_puback_leave_in_one_write(broker: Harness) -> None:
    """A device's job request is answered (`accepted`) and acknowledged (PUBACK) in one
    write to its socket; the answer had one of its own, then the PUBACK another: two
    system calls where one does, twice per job execution."""
    device = await broker.device("pump")
    reader, writer = await raw_device(broker, device)
    try:
        link = session_of(broker, device).link
        assert isinstance(link, TcpWriter)
        counted = _CountedTransport(link._transport)
        link._transport = counted
        request = f"{device.root}/devices/{device.id}/jobs/get"
        writer.write(packets.publish(request, b'{"client_token": "t"}', qos=1, pid=7))
        packet_id, _, answer = await next_publish(reader)
        assert json.loads(answer) == {"jobs": [], "client_token": "t"}
        assert await next_packet(reader) == (0x40, b"\x00\x07")  # the request's PUBACK
        assert len(counted.writes) == 1, counted.writes
        puback(writer, packet_id)
    finally:
        writer.close()
