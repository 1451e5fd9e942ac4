"""MQTT 3.1.1 packets of the message path, encoded and decoded here rather than through
amqtt's packet classes: a PUBLISH costs amqtt a dozen awaits and objects to read and as
many to write, and the hot path cannot afford them. Everything else (CONNECT, SUBSCRIBE,
UNSUBSCRIBE and their acknowledgements) still goes through amqtt's codecs.
"""

from __future__ import annotations

CONNECT, PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP = 1, 3, 4, 5, 6, 7
SUBSCRIBE, UNSUBSCRIBE, PINGREQ, DISCONNECT = 8, 10, 12, 14
PINGRESP = b"\xd0\x00"
_ACK_BYTE = {PUBACK: 0x40, PUBREC: 0x50, PUBREL: 0x62, PUBCOMP: 0x70}
_MAX_LENGTH_BYTES = 4


class ProtocolError(Exception):
    """The client broke MQTT 3.1.1: the connection is closed."""


def remaining_length(length: int) -> bytes:
    out = bytearray()
    while True:
        digit, length = length & 0x7F, length >> 7
        out.append(digit | 0x80 if length else digit)
        if not length:
            return bytes(out)


def next_frame(data: bytes, pos: int, limit: int) -> tuple[int, int] | None:
    """(body start, body end) of the packet at `pos`, or None when it is not all here.

    A packet announcing more than `limit` bytes is refused as soon as its header is read,
    so no more than one chunk beyond `limit` is ever buffered for a client.
    """
    size, multiplier, i, n = 0, 1, pos + 1, len(data)
    while True:
        if i >= n:
            return None
        byte = data[i]
        size += (byte & 0x7F) * multiplier
        i += 1
        if byte < 0x80:
            break
        multiplier <<= 7
        if i - pos > _MAX_LENGTH_BYTES:
            raise ProtocolError("malformed remaining length")
    if size > limit:
        raise ProtocolError(f"packet of {size} bytes is over the limit of {limit}")
    end = i + size
    return (i, end) if end <= n else None


def ack(kind: int, packet_id: bytes) -> bytes:
    """PUBACK, PUBREC, PUBREL or PUBCOMP for a packet identifier (two bytes, big-endian)."""
    return bytes((_ACK_BYTE[kind], 2)) + packet_id


class Message:
    """One application message, encoded at most once per QoS however many receive it."""

    __slots__ = ("topic", "topic_bytes", "payload", "qos", "_heads")

    def __init__(self, topic: str, topic_bytes: bytes, payload: bytes, qos: int) -> None:
        self.topic = topic
        self.topic_bytes = topic_bytes
        self.payload = payload
        self.qos = qos
        self._heads: dict[int, bytes] = {}

    @classmethod
    def of(cls, topic: str, payload: bytes, qos: int) -> Message:
        return cls(topic, topic.encode("utf-8"), payload, qos)

    @property
    def size(self) -> int:
        return len(self.topic_bytes) + len(self.payload)

    def head(self, qos: int, retain: bool = False, dup: bool = False) -> bytes:
        """Fixed header, remaining length and topic: what precedes the packet identifier
        (QoS 1/2) or the payload (QoS 0)."""
        key = qos << 2 | retain << 1 | dup
        head = self._heads.get(key)
        if head is None:
            first = 0x30 | dup << 3 | qos << 1 | retain
            length = 2 + len(self.topic_bytes) + (2 if qos else 0) + len(self.payload)
            topic_length = len(self.topic_bytes).to_bytes(2, "big")
            head = bytes((first,)) + remaining_length(length) + topic_length + self.topic_bytes
            self._heads[key] = head
        return head
