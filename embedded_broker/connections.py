"""A connection's first packet, and its life as the operator reads it in the log.

The CONNECT is read whole here before amqtt parses it, so that its protocol level can be
checked first: amqtt parses an MQTT 5 CONNECT as if it were 3.1.1 (its properties read as
the client ID and what follows), waits for bytes that never come, and the client saw its
connection dropped after the 10 s CONNECT limit. MQTT 3.1.1 (3.1.2.2) says to answer
CONNACK 1 (unacceptable protocol version) and close; edge serves 3.1.1 only.

The log (logger `edge.mqtt`): one INFO line per connection accepted and one per
connection ended (with the reason), and one WARNING line per refusal, written by whoever
refuses (`Refused` marks an exception whose line is written): at most one a minute per
kind of refusal and client address (embedded_broker/refusal_lines.py), the later ones
saying how many refusals they stand for, so a host connecting in a loop cannot flood the
log. Every refusal is still counted in GET /metrics.
"""

from __future__ import annotations

import asyncio
import logging
from contextvars import ContextVar

from amqtt.adapters import ReaderAdapter
from amqtt.errors import MQTTError, NoDataError

from edge.devices.mqtt_clients import MqttClient
from embedded_broker.refusal_lines import RefusalLines

CONNECT = 0x10
PROTOCOL_LEVEL = 4  # MQTT 3.1.1
PROTOCOL_NAMES = (b"MQTT", b"MQIsdp")  # 3.1.1 and later; 3.1
log = logging.getLogger("edge.mqtt")
listener: ContextVar[str] = ContextVar("mqtt_listener", default="?")  # set per connection


class Refused(MQTTError):
    """A connection refused or closed before CONNACK; its log line is written."""


async def read_connect(reader: ReaderAdapter, limit: int) -> bytes:
    """The first packet, whole (fixed header included); it must be a CONNECT of at most
    `limit` bytes after its fixed header."""
    first = await _exactly(reader, 1)
    if first[0] != CONNECT:
        raise MQTTError(f"the first packet is not a CONNECT (type {first[0] >> 4})")
    header, length, multiplier = bytearray(first), 0, 1
    for _ in range(4):
        byte = (await _exactly(reader, 1))[0]
        header.append(byte)
        length += (byte & 0x7F) * multiplier
        multiplier <<= 7
        if byte < 0x80:
            break
    else:
        raise MQTTError("malformed remaining length in CONNECT")
    if length > limit:
        raise MQTTError(f"a CONNECT of {length} bytes is over the limit of {limit}")
    return bytes(header) + await _exactly(reader, length)


def unserved_level(packet: bytes) -> int | None:
    """The protocol level of a CONNECT when it is not the one served (None when it is, or
    when the protocol name is not MQTT's: amqtt refuses those)."""
    start = 1
    while packet[start] & 0x80:
        start += 1
    body = packet[start + 1 :]
    if len(body) < 2:
        return None
    name_end = 2 + int.from_bytes(body[:2], "big")
    if body[2:name_end] not in PROTOCOL_NAMES or len(body) <= name_end:
        return None
    level = body[name_end]
    return None if level == PROTOCOL_LEVEL else level


async def _exactly(reader: ReaderAdapter, n: int) -> bytes:
    try:
        data: bytes = await reader.read(n)
    except asyncio.IncompleteReadError:
        data = b""
    if len(data) < n:
        raise NoDataError("the connection closed before its CONNECT was read")
    return data


def who(client: MqttClient, client_id: str) -> str:
    """How a connection is named in the log: the account, its name, the client ID."""
    name = f" ({client.name})" if client.name else ""
    return f"{client.kind} {client.account_id}{name} client id {client_id!r}"


def connected(client: MqttClient, client_id: str, address: str) -> None:
    log.info("mqtt connect: %s on %s from %s", who(client, client_id), listener.get(), address)


def disconnected(client: MqttClient, client_id: str, address: str, reason: str) -> None:
    log.info(
        "mqtt disconnect: %s on %s from %s (%s)",
        who(client, client_id),
        listener.get(),
        address,
        reason,
    )


def refused(
    lines: RefusalLines, kind: str, reason: str, address: str, client_id: str | None = None
) -> None:
    """The line of a refused connection (`address` is host:port), unless one of this kind
    from this host was logged less than a minute ago: then it is only counted."""
    count = lines.due((kind, host(address)))
    if not count:
        return
    named = f"client id {client_id!r} " if client_id is not None else ""
    log.warning(
        "mqtt connection refused (%s): %sfrom %s on %s%s",
        reason,
        named,
        address,
        listener.get(),
        repeats(count),
    )


def host(address: str) -> str:
    """The host of `host:port` (an IPv6 address keeps its colons): a client's port changes
    with each connection, its host does not."""
    return address.rsplit(":", 1)[0]


def repeats(count: int) -> str:
    """What a line adds when it stands for more than one refusal."""
    return "" if count == 1 else f" ({count} such refusals since the last line)"
