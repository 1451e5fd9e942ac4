"""The rollout benchmark's devices (bench/jobs.py): one process drives every device as a
raw MQTT 3.1.1 client (plain sockets, one thread, select; no client library), each
connected with its own device's API key and subscribed at QoS 1 to its `jobs/#` and its
twin's `update/accepted`.

A device answers its work as a real one would: on `notify-next` naming a QUEUED execution
it publishes `IN_PROGRESS` on `jobs/<job_id>/update` (QoS 1, with the version it was told),
and on that update's `accepted` it publishes `SUCCEEDED` with the version the reply
carries; the SUCCEEDED's `accepted` counts in `jobs_done`. An execution told IN_PROGRESS
that this process did not start (left by an earlier connection) is finished at once.

The reference: each time the parent adds one to `go`, every device sends two durable twin
updates in turn (`twin/update` at QoS 1, the second on the first's `accepted`), counted in
`twins_done`: the same two acknowledged writes per device as an execution, without the
scheduler.
"""

from __future__ import annotations

import json
import select
import socket
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.mqtt_load import Login
from bench.mqtt_raw import _packet, _text, connect
from bench.twin_fleet import Member

NOTIFY = "/notify-next"
UPDATE_ACCEPTED = "/update/accepted"
UPDATE_REJECTED = "/update/rejected"


def jobs_topic(member: Member) -> str:
    return f"{member.root}/devices/{member.id}/jobs"


def twin_topic(member: Member) -> str:
    return f"{member.root}/devices/{member.id}/twin/update"


@dataclass
class Counters:
    """Shared with the parent process (multiprocessing Values)."""

    jobs_done: Any
    twins_done: Any
    rejected: Any


@dataclass
class Device:
    member: Member
    sock: socket.socket
    buffer: bytes = b""
    next_id: int = 1
    started: set[str] = field(default_factory=set)
    twin_left: int = 0  # twin updates this round still to send
    twin_sent: int = 0

    @property
    def jobs(self) -> str:
        return jobs_topic(self.member)

    @property
    def twin(self) -> str:
        return twin_topic(self.member)

    def send(self, topic: str, body: dict[str, Any]) -> None:
        """A QoS 1 PUBLISH; its PUBACK is read and dropped with the rest."""
        packet_id = self.next_id.to_bytes(2, "big")
        self.next_id = self.next_id % 65535 + 1
        self.sock.sendall(_packet(0x32, _text(topic) + packet_id + json.dumps(body).encode()))

    def frames(self) -> Iterator[tuple[int, bytes]]:
        """The whole packets read so far: (first byte, body)."""
        while len(self.buffer) >= 2:
            length, shift, at = 0, 0, 1
            while True:
                if at >= len(self.buffer):
                    return
                digit = self.buffer[at]
                length |= (digit & 0x7F) << shift
                shift, at = shift + 7, at + 1
                if not digit & 0x80:
                    break
            if len(self.buffer) < at + length:
                return
            first, body = self.buffer[0], self.buffer[at : at + length]
            self.buffer = self.buffer[at + length :]
            yield first, body


def subscribe(device: Device) -> None:
    topics = (f"{device.jobs}/#", f"{device.twin}/accepted")
    body = b"".join(_text(topic) + b"\x01" for topic in topics)
    device.sock.sendall(_packet(0x82, (0xFFFF).to_bytes(2, "big") + body))


def run(
    port: int, members: Sequence[Member], counters: Counters, ready: Any, go: Any, stop: Any
) -> None:
    """Connect and subscribe every member, signal `ready` once every SUBACK is in, then
    answer jobs (and a twin round each time `go` grows) until `stop`."""
    devices = []
    for member in members:
        sock = connect(port, Login(f"jobs-{member.id}", member.id, member.key))
        sock.setblocking(False)
        devices.append(Device(member, sock))
        subscribe(devices[-1])
    by_socket = {d.sock: d for d in devices}
    subscribed, rounds = 0, 0
    while not stop.is_set():
        if go.value > rounds:
            rounds += 1
            for device in devices:
                device.twin_left = 2
                _twin_update(device)
        readable, _, _ = select.select(list(by_socket), [], [], 0.05)
        for sock in readable:
            device = by_socket[sock]
            try:
                device.buffer += sock.recv(1 << 16)
            except BlockingIOError:
                continue
            for first, body in device.frames():
                subscribed += first >> 4 == 9
                if first >> 4 == 3:
                    _publish(device, first, body, counters)
        if subscribed == len(devices):
            subscribed += 1
            ready.set()
    for device in devices:
        device.sock.close()


def _publish(device: Device, first: int, body: bytes, counters: Counters) -> None:
    size = int.from_bytes(body[:2], "big")
    topic, rest = body[2 : 2 + size].decode(), body[2 + size :]
    if (first >> 1) & 3:
        device.sock.sendall(b"\x40\x02" + rest[:2])  # PUBACK
        rest = rest[2:]
    message = json.loads(rest or b"{}")
    if topic.startswith(device.twin):
        _twin_accepted(device, counters)
    elif topic.endswith(NOTIFY):
        _notified(device, message.get("execution"))
    elif topic.endswith(UPDATE_ACCEPTED):
        _update_accepted(device, message, counters)
    elif topic.endswith(UPDATE_REJECTED):
        _add(counters.rejected)


def _notified(device: Device, execution: dict[str, Any] | None) -> None:
    if execution is None or execution["job_id"] in device.started:
        return
    job_id, version = execution["job_id"], execution["version"]
    device.started.add(job_id)
    state = "IN_PROGRESS" if execution["state"] == "QUEUED" else "SUCCEEDED"
    device.send(f"{device.jobs}/{job_id}/update", _update(state, version))


def _update_accepted(device: Device, reply: dict[str, Any], counters: Counters) -> None:
    if reply["state"] == "IN_PROGRESS":
        topic = f"{device.jobs}/{reply['job_id']}/update"
        device.send(topic, _update("SUCCEEDED", reply["version"], 100))
    elif reply["state"] == "SUCCEEDED":
        _add(counters.jobs_done)


def _update(state: str, version: int, progress: int = 0) -> dict[str, Any]:
    return {"state": state, "expected_version": version, "progress": progress}


def _twin_update(device: Device) -> None:
    device.twin_left -= 1
    device.twin_sent += 1
    device.send(device.twin, {"reported": {"firmware": f"build-{device.twin_sent}"}})


def _twin_accepted(device: Device, counters: Counters) -> None:
    if device.twin_left > 0:
        _twin_update(device)
    else:
        _add(counters.twins_done)


def _add(value: Any) -> None:
    with value.get_lock():
        value.value += 1
