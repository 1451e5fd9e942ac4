"""The fleet benchmark's devices: one process drives its share of raw MQTT 3.1.1 clients
(plain sockets, one thread, no client library), each connected with its own device's API
key; the first `updating` of them publish one update a second (QoS 1, its PUBACK read and
dropped), and every client sends PINGREQ well within its keep-alive."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Sequence
from typing import Any

from bench.mqtt_load import Login
from embedded_broker.frames import remaining_length

KEEP_ALIVE = 60


def _text(value: str) -> bytes:
    raw = value.encode()
    return len(raw).to_bytes(2, "big") + raw


def _packet(first: int, body: bytes) -> bytes:
    return bytes((first,)) + remaining_length(len(body)) + body


def connect_packet(login: Login) -> bytes:
    header = _text("MQTT") + bytes((4, 0xC2)) + KEEP_ALIVE.to_bytes(2, "big")
    body = header + _text(login.client_id) + _text(login.username or "")
    return _packet(0x10, body + _text(login.password or ""))


def publish_packet(topic: str, payload: bytes, packet_id: int) -> bytes:
    return _packet(0x32, _text(topic) + packet_id.to_bytes(2, "big") + payload)


def connected(port: int, login: Login) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(connect_packet(login))
    connack = sock.recv(4)
    if connack != b"\x20\x02\x00\x00":
        raise RuntimeError(f"CONNACK {connack!r} for {login.client_id}")
    sock.setblocking(False)
    return sock


def devices(
    port: int,
    logins: Sequence[Login],
    topics: Sequence[str],
    updating: int,
    ready: Any,
    stop: Any,
) -> None:
    """Connect every login, signal `ready`, then publish and ping until `stop`."""
    socks = [connected(port, login) for login in logins]
    ready.release()
    tick, began, packet_id = 0, time.monotonic(), 0
    while not stop.is_set():
        tick += 1
        packet_id = packet_id % 65535 + 1
        for i in range(min(updating, len(socks))):
            body = json.dumps({"reported": {"tick": tick, "temp": 20 + i % 7}}).encode()
            socks[i].sendall(publish_packet(topics[i], body, packet_id))
        if tick % (KEEP_ALIVE // 3) == 0:
            for sock in socks:
                sock.sendall(b"\xc0\x00")  # PINGREQ
        _drain(socks, began + tick)
    for sock in socks:
        sock.close()


def _drain(socks: list[socket.socket], until: float) -> None:
    """Read (and drop) what the broker sends until the next second."""
    while (left := until - time.monotonic()) > 0:
        readable, _, _ = select.select(socks, [], [], left)
        for sock in readable:
            try:
                sock.recv(65536)
            except BlockingIOError:
                pass
