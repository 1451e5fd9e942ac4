"""The rollout benchmark's own parts (bench/job_fleet.py, bench/jobs.py): a device reads
whole MQTT packets however the bytes arrive, answers its execution in the order a device
must, and the tick rows' target (a 10,000-device tick within 1.25x of a 10-device one)
can fail."""

from __future__ import annotations

import json
import multiprocessing
import socket
from collections.abc import Iterator

import pytest

from bench import job_fleet, job_ticks, jobs
from bench.mqtt_raw import _packet, _text
from bench.twin_fleet import Member

MEMBER = Member("dev1", "edk_key", "/org1")


@pytest.fixture
def device() -> Iterator[tuple[job_fleet.Device, socket.socket]]:
    ours, server = socket.socketpair()
    yield job_fleet.Device(MEMBER, ours), server
    ours.close()
    server.close()


def publish(topic: str, body: dict[str, object], packet_id: int = 7) -> bytes:
    payload = json.dumps(body).encode()
    return _packet(0x32, _text(topic) + packet_id.to_bytes(2, "big") + payload)


def sent(server: socket.socket) -> list[tuple[str, dict[str, object]]]:
    """The PUBLISHes the device wrote (topic, JSON), its PUBACKs as ("PUBACK", {})."""
    server.setblocking(False)
    reader = job_fleet.Device(MEMBER, server, server.recv(1 << 16))
    found: list[tuple[str, dict[str, object]]] = []
    for first, body in reader.frames():
        if first >> 4 == 4:
            found.append(("PUBACK", {}))
            continue
        size = int.from_bytes(body[:2], "big")
        found.append((body[2 : 2 + size].decode(), json.loads(body[4 + size :])))
    return found


def receive(device: job_fleet.Device, data: bytes, counters: job_fleet.Counters) -> None:
    device.buffer += data
    for first, body in device.frames():
        job_fleet._publish(device, first, body, counters)


def test_packets_split_anywhere_are_read_whole() -> None:
    big = publish(f"{job_fleet.jobs_topic(MEMBER)}/notify-next", {"pad": "x" * 300})
    stream = b"\x90\x03\xff\xff\x01" + big + b"\x40\x02\x00\x01"  # SUBACK, PUBLISH, PUBACK
    assert len(big) > 130  # a remaining length of two bytes
    for cut in range(1, len(stream)):
        reader = job_fleet.Device(MEMBER, socket.socket(), stream[:cut])
        got = list(reader.frames())
        reader.buffer += stream[cut:]
        got += list(reader.frames())
        reader.sock.close()
        assert [first for first, _ in got] == [0x90, 0x32, 0x40], cut
        assert reader.buffer == b""


def test_a_device_starts_then_finishes_its_execution_once(
    device: tuple[job_fleet.Device, socket.socket],
) -> None:
    ours, server = device
    counters = job_fleet.Counters(*(multiprocessing.Value("q", 0) for _ in range(3)))
    jobs_topic = job_fleet.jobs_topic(MEMBER)
    notice = {"execution": {"job_id": "j1", "version": 1, "state": "QUEUED"}}
    receive(ours, publish(f"{jobs_topic}/notify-next", notice), counters)
    assert sent(server) == [
        ("PUBACK", {}),
        (f"{jobs_topic}/j1/update", {"state": "IN_PROGRESS", "expected_version": 1, "progress": 0}),
    ]
    accepted = {"job_id": "j1", "state": "IN_PROGRESS", "version": 2}
    receive(ours, publish(f"{jobs_topic}/j1/update/accepted", accepted), counters)
    assert sent(server)[1] == (
        f"{jobs_topic}/j1/update",
        {"state": "SUCCEEDED", "expected_version": 2, "progress": 100},
    )
    receive(ours, publish(f"{jobs_topic}/notify-next", notice), counters)  # told again
    done = {"job_id": "j1", "state": "SUCCEEDED", "version": 3}
    receive(ours, publish(f"{jobs_topic}/j1/update/accepted", done), counters)
    assert [topic for topic, _ in sent(server)] == ["PUBACK", "PUBACK"]  # nothing started twice
    assert (counters.jobs_done.value, counters.rejected.value) == (1, 0)


@pytest.mark.parametrize(("large_us", "met"), [(1200.0, True), (1300.0, False)])
def test_a_tick_over_many_devices_may_cost_at_most_a_quarter_more(
    large_us: float, met: bool
) -> None:
    cost = {
        (size, kind): job_ticks.TickCost(us / 1e6, us / 1e6)
        for kind in job_ticks.KINDS
        for size, us in ((10, 1000.0), (10_000, large_us))
    }
    rows = jobs.tick_rows(cost, (10, 10_000), "python -m bench.jobs")
    assert len(rows) == 4 and all(row.met is met for row in rows)
