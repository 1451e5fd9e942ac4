"""What one connected client sends, read a chunk at a time and acted on packet by packet.

This replaces amqtt's reader loop, which for every packet awaits several small reads,
builds packet and message objects, starts a task, and passes the message through two
queues and the plugin manager before a broadcast task starts one more task per
receiver. Here a PUBLISH is checked against the client's topic rights (answers kept per
topic), routed, and acknowledged in line; only the packets that change subscriptions go
through amqtt's codecs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from amqtt.adapters import BufferReader
from amqtt.mqtt.packet import MQTTFixedHeader
from amqtt.mqtt.suback import SubackPacket
from amqtt.mqtt.subscribe import SubscribePacket
from amqtt.mqtt.unsuback import UnsubackPacket
from amqtt.mqtt.unsubscribe import UnsubscribePacket

from edge.devices.mqtt_clients import ClientDirectory
from embedded_broker import acl, frames
from embedded_broker.frames import Message, ProtocolError
from embedded_broker.inbox import Inbox
from embedded_broker.links import ChunkReader, Link
from embedded_broker.router import REFUSED, Router
from embedded_broker.sessions import ClientSession

SEEN_SECONDS = 30.0
CACHED_TOPICS = 1024
BUSY_CHUNK = 16  # PUBLISH packets in one read
log = logging.getLogger("edge.mqtt")
PACED = (frames.SUBSCRIBE, frames.UNSUBSCRIBE)  # counted with PUBLISH by the rate limit
pause = asyncio.sleep  # how a client over its rate waits (a test replaces it)


class Inbound:
    def __init__(
        self,
        router: Router,
        session: ClientSession,
        link: Link,
        directory: ClientDirectory,
        on_disconnect: Callable[[], Awaitable[None]],
    ) -> None:
        self.router = router
        self.session = session
        self.link = link
        self.directory = directory
        self.on_disconnect = on_disconnect
        # topic -> (name, refusal, the server's inbox that takes it)
        self._known: dict[bytes, tuple[str, str | None, Inbox | None]] = {}
        self._loop = asyncio.get_running_loop()
        self._rate = router.limits.rate_limit
        self._tokens = float(self._rate)
        self._stamp = self._seen = self.last_read = self._loop.time()

    async def serve(self, reader: ChunkReader) -> None:
        """Until the client disconnects, the connection drops, or the client breaks the
        protocol (logged, then the connection is closed)."""
        limit = self.router.limits.max_message_bytes
        rest = b""
        while True:
            chunk = await reader.read_chunk()
            if not chunk:
                return
            self.last_read = self._loop.time()
            data = rest + chunk if rest else chunk
            pos, published, paced = 0, 0, 0
            while (frame := frames.next_frame(data, pos, limit)) is not None:
                start, end = frame
                kind = data[pos] >> 4
                if kind == frames.PUBLISH:
                    published += 1
                    durable = self._publish(data[pos], data, start, end)
                    if durable is not None:
                        await durable
                else:
                    paced += kind in PACED
                    if not await self._other(kind, data[pos], data[start:end]):
                        return
                pos = end
            rest = data[pos:]
            await self._pace(published, published + paced)

    def _publish(self, first: int, data: bytes, start: int, end: int) -> Awaitable[None] | None:
        qos = (first >> 1) & 3
        if end - start < 2:
            raise ProtocolError("malformed PUBLISH")
        topic_end = start + 2 + (data[start] << 8 | data[start + 1])
        payload_start = topic_end + (2 if qos else 0)
        if qos == 3 or payload_start > end:
            raise ProtocolError("malformed PUBLISH")
        topic_bytes = data[start + 2 : topic_end]
        packet_id = data[topic_end:payload_start]
        known = self._known.get(topic_bytes)
        if known is None:
            known = self._check(topic_bytes)
        topic, refusal, inbox = known
        self.router.stats.received += 1
        if refusal is not None:
            self.router.stats.refused_publishes += 1
            size = end - payload_start
            self.router.refusal(self.session, "publish", topic, qos, size, refusal)
            self._acknowledge(qos, packet_id)
            return None
        if qos == 2 and not self._first_delivery(packet_id):
            self._acknowledge(qos, packet_id)
            return None
        if inbox is not None:  # a request to the server: answered, never routed or retained
            return self._to_server(inbox, topic, data[payload_start:end], qos, packet_id)
        message = Message(topic, topic_bytes, data[payload_start:end], qos)
        if first & 1:
            stored = self.router.retain(message, self.session.client.account_id)
            if stored is None:  # past the account's retained bytes: refused and counted
                self._acknowledge(qos, packet_id)
                return None
            if qos:
                return self._after_commit(stored, message, packet_id)
            asyncio.ensure_future(stored).add_done_callback(_report_store_failure)
        journaled = self.router.route(message)
        if journaled is not None:
            return self._after_journal(journaled, qos, packet_id)
        self._acknowledge(qos, packet_id)
        return None

    def _check(self, topic_bytes: bytes) -> tuple[str, str | None, Inbox | None]:
        client = self.session.client
        topic = _topic(topic_bytes)
        refusal = acl.publish_refusal(client, topic)
        inbox = None if refusal is not None else self.router.inboxes.taking(client, topic)
        known = topic, refusal, inbox
        if len(self._known) < CACHED_TOPICS:
            self._known[topic_bytes] = known
        return known

    async def _to_server(
        self, inbox: Inbox, topic: str, payload: bytes, qos: int, packet_id: bytes
    ) -> None:
        """The client's later packets wait for the answer, so its requests apply in order
        and the acknowledgement follows what the request made durable. The answer and the
        acknowledgement go to the socket together, at once: one write, not two (the
        device waits for both; a job's execution is two such requests, #31)."""
        session = self.session
        session.replying = True
        try:
            await inbox.receive(session.client, topic, payload)
        finally:
            session.replying = False
        self._acknowledge(qos, packet_id)
        self.link.flush()

    async def _after_commit(
        self, stored: Awaitable[None], message: Message, packet_id: bytes
    ) -> None:
        """A retained QoS 1/2 message is acknowledged only once committed; the client's
        later packets wait, so acknowledgements keep their order (MQTT-4.6.0-2)."""
        await stored
        journaled = self.router.route(message)
        if journaled is not None:
            await self._after_journal(journaled, message.qos, packet_id)
        else:
            self._acknowledge(message.qos, packet_id)

    async def _after_journal(
        self, journaled: list[Awaitable[None]], qos: int, packet_id: bytes
    ) -> None:
        """A message queued for persistent sessions whose clients are away is acknowledged
        once stored (a failed write is logged by the router; the message stays queued in
        memory)."""
        await asyncio.gather(*journaled, return_exceptions=True)
        self._acknowledge(qos, packet_id)

    def _acknowledge(self, qos: int, packet_id: bytes) -> None:
        if qos == 1:
            self.link.send(frames.ack(frames.PUBACK, packet_id))
        elif qos == 2:
            self.link.send(frames.ack(frames.PUBREC, packet_id))

    def _first_delivery(self, packet_id: bytes) -> bool:
        """QoS 2: a PUBLISH repeated before its PUBREL is acknowledged, not delivered again."""
        pending = self.session.incoming_qos2
        number = int.from_bytes(packet_id, "big")
        if number in pending:
            return False
        if len(pending) >= self.router.limits.queue_messages:
            raise ProtocolError("too many QoS 2 messages left unreleased")
        pending.add(number)
        return True

    async def _other(self, kind: int, first: int, body: bytes) -> bool:
        """Every packet but PUBLISH; False ends the connection normally (DISCONNECT)."""
        if kind in (frames.PUBACK, frames.PUBREC, frames.PUBREL, frames.PUBCOMP):
            self._flow(kind, body)
        elif kind == frames.PINGREQ:
            self.link.send(frames.PINGRESP)
        elif kind == frames.SUBSCRIBE and first & 0x0F == 2:
            await self._subscribe(first, body)
        elif kind == frames.UNSUBSCRIBE and first & 0x0F == 2:
            await self._unsubscribe(first, body)
        elif kind == frames.DISCONNECT:
            await self.on_disconnect()
            return False
        else:
            raise ProtocolError(f"unexpected packet type {kind} (flags {first & 0x0F})")
        return True

    def _flow(self, kind: int, body: bytes) -> None:
        if len(body) != 2:
            raise ProtocolError("malformed acknowledgement")
        number = int.from_bytes(body, "big")
        if kind == frames.PUBREL:
            self.session.incoming_qos2.discard(number)
            self.link.send(frames.ack(frames.PUBCOMP, body))
        elif kind == frames.PUBREC:
            self.session.received(number, body)
        else:
            self.session.acknowledged(number)

    async def _subscribe(self, first: int, body: bytes) -> None:
        header = MQTTFixedHeader(frames.SUBSCRIBE, first & 0x0F, len(body))
        packet = await SubscribePacket.from_stream(BufferReader(body), fixed_header=header)
        wanted: list[tuple[str, int]] = packet.payload.topics
        if not wanted or any(not 0 <= qos <= 2 for _, qos in wanted):
            raise ProtocolError("malformed SUBSCRIBE")
        granted = self.router.subscribe(self.session, wanted)
        packet_id = packet.variable_header.packet_id
        self.link.send(SubackPacket.build(packet_id, granted).to_bytes())
        for (topic_filter, _), qos in zip(wanted, granted, strict=True):
            if qos != REFUSED:
                for message in self.router.retained.matching(topic_filter):
                    self.session.offer(message, min(qos, message.qos), retain=True)
        held = [f for (f, _), qos in zip(wanted, granted, strict=True) if qos != REFUSED]
        self.router.inboxes.subscribed(self.session.client, held, self.session.told)

    async def _unsubscribe(self, first: int, body: bytes) -> None:
        header = MQTTFixedHeader(frames.UNSUBSCRIBE, first & 0x0F, len(body))
        packet = await UnsubscribePacket.from_stream(BufferReader(body), fixed_header=header)
        self.router.unsubscribe(self.session, packet.payload.topics)
        self.link.send(UnsubackPacket.build(packet.variable_header.packet_id).to_bytes())

    async def _pace(self, published: int, paced: int) -> None:
        """The per-client rate limit, on PUBLISH, SUBSCRIBE and UNSUBSCRIBE packets alike
        (`paced`; a SUBSCRIBE costs more than a PUBLISH: the ACL, retained messages, an
        inbox's answer): a client over its budget is not read from until the budget
        refills (TCP pushes back on it; nothing is dropped). A busy client also lets the
        rest of the loop run between two of its chunks."""
        self.session.published += published  # for billing: per chunk, not per message
        now = self._loop.time()
        if now - self._seen > SEEN_SECONDS:
            self._seen = now
            self.directory.seen(self.session.client.account_id)
        self._tokens = min(self._rate, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now
        self._tokens -= paced
        if self._tokens < 0:
            await pause(-self._tokens / self._rate)
        elif paced > BUSY_CHUNK:
            await pause(0)


def _topic(topic_bytes: bytes) -> str:
    """A topic name to publish to: UTF-8, not empty, no wildcard, no NUL (MQTT-3.3.2-2,
    MQTT-4.7.3-1/2); anything else ends the connection."""
    try:
        topic = topic_bytes.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError("topic is not UTF-8") from None
    if not topic or "+" in topic or "#" in topic or "\x00" in topic:
        raise ProtocolError("invalid topic name in PUBLISH")
    return topic


def _report_store_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("mqtt: a retained message could not be stored", exc_info=future.exception())
