"""A client's MQTT session as the message path sees it: its subscriptions, the QoS 1/2
messages in flight to it and those waiting, with the bounds that keep a slow or absent
client from growing the broker's memory.

The policy (docs/mqtt.md):
- A message is delivered at the lower of its publish QoS and the subscription's QoS.
- QoS 0: written at once; dropped when more than `queue_bytes` already wait for the
  client (in the socket's buffers and in its queue), and never kept while it is offline.
- QoS 1/2: at most `MAX_INFLIGHT` unacknowledged at a time, the rest wait in order. When
  `queue_messages` messages or `queue_bytes` bytes already wait, a connected client is
  disconnected (its persistent session, if any, keeps what waits) and a message for an
  offline session is dropped.
So a client costs at most about 2 x `queue_bytes` plus `MAX_INFLIGHT` messages. What
waits also counts against the account's total (embedded_broker/accounts.py), which is
treated as one more bound of the same kind.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from edge.devices.mqtt_clients import MqttClient
from embedded_broker.accounts import QUEUE, AccountLimits, Accounts, Usage
from embedded_broker.frames import PUBREL, Message, ack
from embedded_broker.links import Link
from storage.mqtt_sessions import StoredMessage, StoredSession

MAX_INFLIGHT = 100


@dataclass(frozen=True)
class Limits:
    queue_messages: int
    queue_bytes: int
    max_message_bytes: int
    rate_limit: int
    max_connections: int
    max_subscriptions: int = 500
    max_connections_per_address: int = 512


@dataclass
class Stats:
    """Counters, for tests, benchmarks and the operator's log."""

    connects: int = 0
    refused_connects: int = 0
    received: int = 0
    sent: int = 0
    dropped_qos0: int = 0
    dropped_offline: int = 0
    slow_disconnects: int = 0
    refused_publishes: int = 0
    refused_subscriptions: int = 0
    revoked: int = 0


class _Outgoing:
    __slots__ = ("message", "qos", "retain", "released")

    def __init__(self, message: Message, qos: int, retain: bool) -> None:
        self.message = message
        self.qos = qos
        self.retain = retain
        self.released = False  # QoS 2: PUBREC received, PUBREL sent


class ClientSession:
    """Kept in amqtt's `Session.attributes` for as long as amqtt keeps the session."""

    def __init__(
        self,
        key: str,
        client: MqttClient,
        limits: Limits,
        stats: Stats,
        accounts: Accounts | None = None,
    ) -> None:
        self.key = key
        self.client = client
        self.limits = limits
        self.stats = stats
        # The account's totals, shared by all its sessions (a private one when alone).
        self.accounts = accounts if accounts is not None else Accounts(AccountLimits())
        self.usage = accounts.usage(client.account_id) if accounts is not None else Usage()
        self.link: Link | None = None
        self.on_overflow: Callable[[], None] = _nothing
        # Told when a sender this session refused for want of room (`offer` with `spare`)
        # can offer again: the messages that waited have all gone out (set by the handler).
        self.on_room: Callable[[], None] = _nothing
        self._refused_spare = False
        self.subscriptions: dict[str, int] = {}
        self.inflight: dict[int, _Outgoing] = {}
        self.waiting: deque[_Outgoing] = deque()
        self.waiting_bytes = 0
        self.incoming_qos2: set[int] = set()
        self.revoked = False
        self.published = 0  # PUBLISH packets read from the client, not yet metered
        # A persistent session (clean session false): `journal` is given each QoS 1/2
        # message queued while its client is away, to be stored (embedded_broker/persistence.py).
        self.persistent = False
        self.journal: Callable[[ClientSession, StoredMessage], None] | None = None
        self.stored_seq = 0
        # What the server's inboxes answered to this connection's subscriptions of their
        # watched topics (embedded_broker/inbox.py): a twin's delta is sent once per
        # version, not once per SUBSCRIBE. Forgotten when a connection takes the session.
        self.told: dict[str, int | None] = {}
        # A request of this client's is being answered by a server inbox (inbound.py,
        # `_to_server`): what the server sends the session meanwhile (the answer) is left
        # gathered, to leave in one write with the request's acknowledgement.
        self.replying = False
        # The last packet identifier used: they run 1..65535, then start again. Counted,
        # not drawn from itertools.cycle, which keeps every value it yields (2.5 MiB).
        self._last_id = 0

    def offer(self, message: Message, qos: int, retain: bool = False, spare: bool = False) -> bool:
        """Deliver, queue or drop a message for this session, by the policy above; whether
        it was sent or queued. With `spare`, a QoS 1/2 message that finds no room is only
        refused (False): the client is not cut off and nothing is counted, for a sender
        that keeps the message and offers it again later (queued commands)."""
        link = self.link
        if qos == 0:
            if link is None:
                return False
            if link.waiting() + self.waiting_bytes > self.limits.queue_bytes:
                self.stats.dropped_qos0 += 1
                return False
            head = message.head(0, retain)
            self.stats.sent += 1
            link.send(head)
            link.send(message.payload)
            return True
        out = _Outgoing(message, qos, retain)
        if link is not None and not self.waiting and len(self.inflight) < MAX_INFLIGHT:
            self._send(link, out)
        elif self._fits(message.size):
            self._enqueue(out)
            if link is None and self.journal is not None:
                self.stored_seq += 1
                stored = StoredMessage(
                    self.stored_seq, None, False, message.topic, message.payload, qos, retain
                )
                self.journal(self, stored)
        elif spare:
            self._refused_spare = True
            return False
        elif link is not None:
            self.stats.slow_disconnects += 1
            self.on_overflow()
            return False
        else:
            self.stats.dropped_offline += 1
            return False
        return True

    def acknowledged(self, packet_id: int) -> None:
        """PUBACK (QoS 1) or PUBCOMP (QoS 2) from the client; once nothing waits behind
        what is in flight, a sender refused for want of room is told (`on_room`)."""
        if self.inflight.pop(packet_id, None) is not None:
            self._pump()
            if self._refused_spare and not self.waiting:
                self._refused_spare = False
                self.on_room()

    def received(self, packet_id: int, packet_id_bytes: bytes) -> None:
        """PUBREC from the client (QoS 2): answer PUBREL and wait for PUBCOMP."""
        out = self.inflight.get(packet_id)
        if out is not None and self.link is not None:
            out.released = True
            self.link.send(ack(PUBREL, packet_id_bytes))

    def attach(self, link: Link) -> None:
        """A connection takes the session: resend what was in flight (MQTT-4.4.0-1), then
        what waited."""
        self.link = link
        self.told.clear()
        for packet_id, out in self.inflight.items():
            packet_id_bytes = packet_id.to_bytes(2, "big")
            if out.released:
                link.send(ack(PUBREL, packet_id_bytes))
            else:
                link.send(out.message.head(out.qos, out.retain, dup=True))
                link.send(packet_id_bytes)
                link.send(out.message.payload)
        self._pump()

    def detach(self) -> None:
        self.link = None

    def clear(self) -> None:
        self.incoming_qos2.clear()
        self.inflight.clear()
        self.waiting.clear()
        self.usage.queued -= self.waiting_bytes
        self.waiting_bytes = 0

    def snapshot(self, disconnected_at: float | None, with_messages: bool) -> StoredSession:
        """What is stored of a persistent session: in-flight messages first, by packet
        identifier, then those waiting, in order."""
        messages: list[StoredMessage] = []
        if with_messages:
            kept: list[tuple[int | None, _Outgoing]] = list(self.inflight.items())
            kept += [(None, out) for out in self.waiting]
            for seq, (packet_id, out) in enumerate(kept, 1):
                m, released = out.message, out.released and packet_id is not None
                messages.append(
                    StoredMessage(seq, packet_id, released, m.topic, m.payload, out.qos, out.retain)
                )
            self.stored_seq = len(messages)
        client = self.client
        return StoredSession(
            self.key,
            client.kind,
            client.account_id,
            client.credential,
            client.stamp,
            dict(self.subscriptions),
            sorted(self.incoming_qos2),
            disconnected_at,
            messages,
        )

    def restore(self, messages: Iterable[StoredMessage]) -> None:
        """Messages read back after a restart: those in flight keep their packet
        identifiers (resent with DUP, or PUBREL, on reconnection), the rest wait; within
        the same bounds as ever."""
        for seq, packet_id, released, topic, payload, qos, retain in messages:
            self.stored_seq = max(self.stored_seq, seq)
            out = _Outgoing(Message.of(topic, payload, qos), qos, retain)
            out.released = released
            if packet_id is not None and len(self.inflight) < MAX_INFLIGHT:
                self.inflight.setdefault(packet_id, out)
            elif self._fits(out.message.size):
                self._enqueue(out)
            else:
                self.stats.dropped_offline += 1

    def _pump(self) -> None:
        link = self.link
        while link is not None and self.waiting and len(self.inflight) < MAX_INFLIGHT:
            out = self.waiting.popleft()
            self.waiting_bytes -= out.message.size
            self.usage.queued -= out.message.size
            self._send(link, out)

    def _fits(self, size: int) -> bool:
        """Whether one more message of `size` bytes may wait: the session's bounds, then,
        for a session with no connection, the account's (the total guards the disk, which
        only offline sessions write their queues to; a live client is not cut off for what
        an abandoned session of its account holds). A refusal there is counted and logged
        by `Accounts`."""
        if len(self.waiting) >= self.limits.queue_messages:
            return False
        if self.waiting_bytes + size > self.limits.queue_bytes:
            return False
        if self.link is not None or self.accounts.may_queue(self.usage, size):
            return True
        detail = f"{self.usage.queued} bytes waiting for its sessions"
        self.accounts.refuse(self.client.account_id, QUEUE, detail)
        return False

    def _enqueue(self, out: _Outgoing) -> None:
        self.waiting.append(out)
        self.waiting_bytes += out.message.size
        self.usage.queued += out.message.size

    def _send(self, link: Link, out: _Outgoing) -> None:
        packet_id = self._next_id()
        while packet_id in self.inflight:
            packet_id = self._next_id()
        self.inflight[packet_id] = out
        self.stats.sent += 1
        link.send(out.message.head(out.qos, out.retain))
        link.send(packet_id.to_bytes(2, "big"))
        link.send(out.message.payload)

    def _next_id(self) -> int:
        self._last_id = self._last_id % 65535 + 1
        return self._last_id


def _nothing() -> None:
    pass
