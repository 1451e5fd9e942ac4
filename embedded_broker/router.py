"""Where messages go: subscriptions (checked against the client's topic rights),
retained messages, and the fan-out of one published message to every matching session.

Refusals are logged with the client, the topic or filter and the size, never the payload;
past `LOGGED_REFUSALS` only every thousandth is logged (all are counted), so a misbehaving
client cannot flood the log.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable

from embedded_broker.frames import Message
from embedded_broker.retained import RetainedMessages, RetainedStore
from embedded_broker.sessions import ClientSession, Limits, Stats
from embedded_broker.subscriptions import SubscriptionTree

REFUSED = 0x80
LOGGED_REFUSALS = 20
log = logging.getLogger("edge.mqtt")


class Router:
    def __init__(self, limits: Limits, store: RetainedStore) -> None:
        self.limits = limits
        self.stats = Stats()
        self.tree: SubscriptionTree[ClientSession] = SubscriptionTree()
        self.retained = RetainedMessages(store)
        self._published: dict[str, int] = {}  # by organization, of sessions settled

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

    def route(self, message: Message) -> None:
        """Hand a message to every session subscribed to its topic, each at the lower of
        the two QoS (amqtt used the subscription's)."""
        qos = message.qos
        for session, granted in self.tree.match(message.topic):
            session.offer(message, qos if qos < granted else granted)

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
        return qos

    def unsubscribe(self, session: ClientSession, topic_filter: str) -> None:
        if session.subscriptions.pop(topic_filter, None) is not None:
            self.tree.remove(session, topic_filter)

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
