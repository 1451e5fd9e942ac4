"""Where messages go: subscriptions (checked against the client's topic rights),
retained messages, and the fan-out of one published message to every matching session.

Refusals are logged with the client, the topic or filter and the size, never the payload;
past `LOGGED_REFUSALS` only every thousandth is logged (all are counted), so a misbehaving
client cannot flood the log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable

from embedded_broker.frames import Message
from embedded_broker.persistence import MessageTuple, SessionStore
from embedded_broker.retained import RetainedMessages, RetainedStore
from embedded_broker.sessions import ClientSession, Limits, Stats
from embedded_broker.subscriptions import SubscriptionTree

REFUSED = 0x80
LOGGED_REFUSALS = 20
log = logging.getLogger("edge.mqtt")


class Router:
    def __init__(self, limits: Limits, store: RetainedStore, sessions: SessionStore) -> None:
        self.limits = limits
        self.stats = Stats()
        self.tree: SubscriptionTree[ClientSession] = SubscriptionTree()
        self.retained = RetainedMessages(store)
        self._published: dict[str, int] = {}  # by organization, of sessions settled
        self.sessions = sessions
        self._journaled: list[Awaitable[None]] = []

    def settle(self, session: ClientSession) -> None:
        """Move a session's count of published messages to its organization's."""
        count = session.published
        if count:
            session.published = 0
            org_id = session.client.org_id
            self._published[org_id] = self._published.get(org_id, 0) + count

    def take_published(self) -> dict[str, int]:
        """Messages published by organization since the last call (settled sessions)."""
        taken, self._published = self._published, {}
        return taken

    def route(self, message: Message) -> list[Awaitable[None]] | None:
        """Hand a message to every session subscribed to its topic, each at the lower of
        the two QoS (amqtt used the subscription's). Returns the writes of the message to
        persistent sessions whose clients are away, if any: the publisher's PUBACK or
        PUBREC waits for them."""
        qos = message.qos
        for session, granted in self.tree.match(message.topic):
            session.offer(message, qos if qos < granted else granted)
        if self._journaled:
            journaled, self._journaled = self._journaled, []
            return journaled
        return None

    def journal(self, session: ClientSession, message: MessageTuple) -> None:
        """A QoS 1/2 message queued for a persistent session whose client is away."""
        self._journaled.append(_logged(self.sessions.append(session.key, message)))

    def make_persistent(self, session: ClientSession) -> None:
        session.persistent, session.journal = True, self.journal

    def persist(
        self, session: ClientSession, disconnected_at: float | None = None, messages: bool = False
    ) -> Awaitable[None]:
        """Store a persistent session (and, with `messages`, what is in flight and waiting
        in place of what was stored)."""
        snapshot = session.snapshot(disconnected_at, messages)
        return _logged(self.sessions.save([snapshot], messages))

    def forget_stored(self, key: str) -> Awaitable[None]:
        return _logged(self.sessions.forget(key))

    def route_to_device(self, device_id: str, message: Message) -> int:
        """Hand a message only to this device's own sessions subscribed to its topic (a
        server notice that carries a secret for the device: user tools subscribed to the
        same topic do not get it). Returns how many sessions got it."""
        qos, count = message.qos, 0
        for session, granted in self.tree.match(message.topic):
            client = session.client
            if client.kind == "device" and client.account_id == device_id:
                session.offer(message, qos if qos < granted else granted)
                count += 1
        self._journaled = []  # stored in the background; no publisher waits for a notice
        return count

    def retain(self, message: Message) -> Awaitable[None]:
        return self.retained.set(message)

    def subscribe(self, session: ClientSession, topic_filter: str, qos: int) -> int:
        """The granted QoS, or 0x80 for a filter outside the client's rights."""
        if not session.client.rights.may_subscribe(topic_filter):
            self.stats.refused_subscriptions += 1
            self.refusal(session, "subscribe", topic_filter, qos, 0)
            return REFUSED
        session.subscriptions[topic_filter] = qos
        self.tree.add(session, topic_filter, qos)
        if session.persistent:
            self.persist(session)
        return qos

    def unsubscribe(self, session: ClientSession, topic_filter: str) -> None:
        if session.subscriptions.pop(topic_filter, None) is not None:
            self.tree.remove(session, topic_filter)
            if session.persistent:
                self.persist(session)

    def forget(self, session: ClientSession) -> None:
        """The session ends: its subscriptions and queues go."""
        for topic_filter in session.subscriptions:
            self.tree.remove(session, topic_filter)
        session.subscriptions.clear()
        session.clear()

    def refusal(self, session: ClientSession, action: str, topic: str, qos: int, size: int) -> None:
        count = self.stats.refused_publishes + self.stats.refused_subscriptions
        if count <= LOGGED_REFUSALS or count % 1000 == 0:
            log.warning(
                "mqtt %s refused: client %s (%s %s), topic %r, qos %d, %d bytes (%d refusals)",
                action,
                session.key,
                session.client.kind,
                session.client.account_id,
                topic,
                qos,
                size,
                count,
            )


def _logged(write: Awaitable[None]) -> Awaitable[None]:
    """A session write nobody may wait for still has its failure logged."""
    future = asyncio.ensure_future(write)
    future.add_done_callback(_report_failure)
    return future


def _report_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("mqtt: a persistent session could not be stored", exc_info=future.exception())
