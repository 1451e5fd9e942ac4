"""Raw MQTT 3.1.1 packets, for tests that send what paho would not (a packet past a
limit, a protocol level paho does not speak, several packets in one write), and a
blocking socket session to send them on."""

from __future__ import annotations

import socket

from embedded_broker.frames import remaining_length


def text(value: str | bytes) -> bytes:
    raw = value.encode() if isinstance(value, str) else value
    return len(raw).to_bytes(2, "big") + raw


def packet(first: int, body: bytes) -> bytes:
    return bytes((first,)) + remaining_length(len(body)) + body


def connect(
    client_id: str,
    username: str,
    password: str,
    *,
    clean: bool = True,
    keep_alive: int = 30,
    level: int = 4,
    properties: bytes = b"",
) -> bytes:
    """CONNECT with a user name and password; `level` 5 with `properties` is MQTT 5's."""
    flags = 0xC0 | (0x02 if clean else 0)
    header = text("MQTT") + bytes((level, flags)) + keep_alive.to_bytes(2, "big") + properties
    return packet(0x10, header + text(client_id) + text(username) + text(password))


def subscribe(packet_id: int, filters: list[tuple[str, int]]) -> bytes:
    body = packet_id.to_bytes(2, "big") + b"".join(text(f) + bytes((q,)) for f, q in filters)
    return packet(0x82, body)


def publish(topic: str, payload: bytes, qos: int = 0, retain: bool = False, pid: int = 1) -> bytes:
    packet_id = pid.to_bytes(2, "big") if qos else b""
    return packet(0x30 | qos << 1 | int(retain), text(topic) + packet_id + payload)


def exchange(port: int, data: bytes, until: int | None = None, source: str = "127.0.0.1") -> bytes:
    """Send `data` from the loopback address `source`; what comes back until the broker
    closes the connection (or, with `until`, once that many bytes have come)."""
    with socket.create_connection(("127.0.0.1", port), 15, (source, 0)) as sock:
        sock.sendall(data)
        received = b""
        while until is None or len(received) < until:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            received += chunk
        return received
