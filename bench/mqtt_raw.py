"""A load generator far cheaper than paho, to find the broker's own ceiling: MQTT 3.1.1
over plain sockets with every PUBLISH frame built once, sent in batches of hundreds per
system call, and received frames counted from the byte count (every frame of a run has
the same size), so a client spends well under a microsecond per message. Only QoS 0 (no
acknowledgements to track). Publishers run ahead of their subscribers by a window, as in
bench/mqtt_load.py, so nothing is dropped.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Sequence
from typing import Any

from bench.mqtt_load import PAYLOAD, Login

BATCH = 256


def _text(value: str | bytes) -> bytes:
    raw = value.encode() if isinstance(value, str) else value
    return len(raw).to_bytes(2, "big") + raw


def _remaining(length: int) -> bytes:
    out = bytearray()
    while True:
        length, digit = divmod(length, 128)
        out.append(digit | (0x80 if length else 0))
        if not length:
            return bytes(out)


def _packet(first: int, body: bytes) -> bytes:
    return bytes((first,)) + _remaining(len(body)) + body


def publish_frame(topic: str) -> bytes:
    return _packet(0x30, _text(topic) + PAYLOAD)


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise RuntimeError("the broker closed the connection")
        data += chunk
    return data


def connect(port: int, login: Login) -> socket.socket:
    flags = 0x02  # clean session
    payload = _text(login.client_id)
    if login.username is not None:
        flags |= 0x80 | 0x40
        payload += _text(login.username) + _text(login.password or "")
    body = _text("MQTT") + bytes((4, flags)) + (0).to_bytes(2, "big") + payload  # no keep-alive
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    sock.sendall(_packet(0x10, body))
    connack = _read_exactly(sock, 4)
    if connack[:2] != b"\x20\x02" or connack[3] != 0:
        raise RuntimeError(f"{login.client_id} refused: {connack!r}")
    return sock


def subscribe(sock: socket.socket, topic: str) -> None:
    sock.sendall(_packet(0x82, (1).to_bytes(2, "big") + _text(topic) + b"\x00"))
    suback = _read_exactly(sock, 5)
    if suback[0] != 0x90 or suback[4] > 2:
        raise RuntimeError(f"subscription to {topic} refused: {suback!r}")


def subscribers(
    port: int,
    logins: Sequence[Login],
    topics: Sequence[str],
    slots: Sequence[int],
    counts: Any,
    ready: Any,
    stop: Any,
) -> None:
    socks = []
    for login, topic in zip(logins, topics, strict=True):
        sock = connect(port, login)
        subscribe(sock, topic)
        sock.setblocking(False)
        socks.append(sock)
    sizes = [len(publish_frame(topic)) for topic in topics]
    received = [0] * len(socks)
    index = {sock: i for i, sock in enumerate(socks)}
    ready.release()
    while not stop.is_set():
        readable, _, _ = select.select(socks, [], [], 0.05)
        for sock in readable:
            i = index[sock]
            try:
                received[i] += len(sock.recv(1 << 20))
            except BlockingIOError:
                continue
            counts[slots[i]] = received[i] // sizes[i]
    for sock in socks:
        sock.close()


def publishers(
    port: int,
    logins: Sequence[Login],
    topics: Sequence[str],
    watched: Sequence[Sequence[int]],
    window: int,
    counts: Any,
    ready: Any,
    go: Any,
    stop: Any,
) -> None:
    socks = [connect(port, login) for login in logins]
    batches = [publish_frame(topic) * BATCH for topic in topics]
    sent = [0] * len(socks)
    ready.release()
    go.wait()
    while not stop.is_set():
        progressed = False
        for i, sock in enumerate(socks):
            if min(counts[j] for j in watched[i]) + window - sent[i] >= BATCH:
                sock.sendall(batches[i])
                sent[i] += BATCH
                progressed = True
        if not progressed:
            time.sleep(0.0005)
    for sock in socks:
        sock.close()
