"""Where messages go: subscriptions (checked by the broker's ACL, embedded_broker/acl.py,
and bounded per session by `max_subscriptions`), retained messages, and the fan-out of
one published message to every matching session.

Refusals are logged with the client, the topic or filter and the size, never the payload;
past `LOGGED_REFUSALS` only every thousandth is logged (all are counted), so a misbehaving
client cannot flood the log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence

from edge.devices.mqtt_clients import MqttClient
from embedded_broker import acl
from embedded_broker.accounts import RETAINED, AccountLimits, Accounts
from embedded_broker.frames import Message
from embedded_broker.inbox import Inboxes
from embedded_broker.persistence import SessionStore
from embedded_broker.retained import RetainedMessages, RetainedStore
from embedded_broker.sessions import ClientSession, Limits, Stats
from embedded_broker.subscriptions import SubscriptionTree
from storage.mqtt_sessions import StoredMessage

REFUSED = 0x80
_OVER_LIMIT = -1  # a filter past max_subscriptions (answered 0x80, logged once per packet)
LOGGED_REFUSALS = 20
log = logging.getLogger("edge.mqtt")


class Router:
    def __init__(
        self,
        limits: Limits,
        store: RetainedStore,
        sessions: SessionStore,
        accounts: AccountLimits | None = None,
    ) -> None:
        self.limits = limits
        self.stats = Stats()
        self.accounts = Accounts(accounts or AccountLimits())
        self.tree: SubscriptionTree[ClientSession] = SubscriptionTree()
        self.retained = RetainedMessages(store)
        self._published: dict[str, int] = {}  # by organization, of sessions settled
        self.sessions = sessions
        self.inboxes = Inboxes()  # the server's own requests topics (embedded_broker/inbox.py)
        self._journaled: list[Awaitable[None]] = []
        self._saving: set[str] = set()  # sessions whose subscriptions are being stored
        self._resave: set[str] = set()  # ... and changed again meanwhile

    def new_session(self, key: str, client: MqttClient) -> ClientSession:
        return ClientSession(key, client, self.limits, self.stats, self.accounts)

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

    def journal(self, session: ClientSession, message: StoredMessage) -> None:
        """A QoS 1/2 message queued for a persistent session whose client is away."""
        self._journaled.append(_logged(self.sessions.append(session.key, message)))

    def make_persistent(self, session: ClientSession) -> None:
        session.persistent, session.journal = True, self.journal
        self.accounts.kept(session.client.account_id, session.key)

    def persist(
        self, session: ClientSession, disconnected_at: float | None = None, messages: bool = False
    ) -> Awaitable[None]:
        """Store a persistent session (and, with `messages`, what is in flight and waiting
        in place of what was stored)."""
        if messages:
            self._resave.discard(session.key)  # this write carries the subscriptions too
        snapshot = session.snapshot(disconnected_at, messages)
        return _logged(self.sessions.save([snapshot], messages))

    def forget_stored(self, key: str) -> Awaitable[None]:
        self._resave.discard(key)
        self.accounts.ended(key)
        return _logged(self.sessions.forget(key))

    def route_to_device(
        self, device_id: str, message: Message, connected: bool = False, spare: bool = False
    ) -> int:
        """Hand a message only to this device's own sessions subscribed to its topic (a
        server notice that carries a secret for the device: user tools subscribed to the
        same topic do not get it), with `connected` only to those whose client is here
        now (a persistent session that is away would get it too late for anyone waiting),
        with `spare` only to those with room for it (ClientSession.offer). Returns how many
        sessions took it (sent or queued), not how many were offered it.

        Someone waits for each such notice (a twin's delta after its PATCH, a command's
        caller, a tunnel's opener), so it goes to the socket now: gathered until the end of
        the loop's round, a delta waited for the PATCH's whole HTTP answer (#29). Not a
        session whose request is being answered (`ClientSession.replying`): its answer
        leaves with the request's acknowledgement, one write for both (#31)."""
        qos, count = message.qos, 0
        for session, granted in self.tree.match(message.topic):
            client = session.client
            link = session.link
            if connected and link is None:
                continue
            if client.kind == "device" and client.account_id == device_id:
                count += session.offer(message, qos if qos < granted else granted, spare=spare)
                if link is not None and not session.replying:
                    link.flush()
        self._journaled = []  # stored in the background; no publisher waits for a notice
        return count

    def route_where(self, message: Message, may_receive: Callable[[MqttClient], bool]) -> int:
        """Hand a server message to the sessions subscribed to its topic whose client
        `may_receive` it (a data change: only where the account may read the path). The
        subscription tree finds the subscribers, so the cost is theirs, not every
        session's; `may_receive` is asked once per account, not once per session.
        Returns how many sessions took it."""
        qos, count = message.qos, 0
        answers: dict[tuple[str, str], bool] = {}
        for session, granted in self.tree.match(message.topic):
            client = session.client
            key = (client.kind, client.account_id)
            allowed = answers.get(key)
            if allowed is None:
                allowed = answers[key] = may_receive(client)
            if allowed:
                count += session.offer(message, qos if qos < granted else granted)
        self._journaled = []  # stored in the background; no publisher waits for a change
        return count

    def retain(self, message: Message, owner: str | None) -> Awaitable[None] | None:
        """Keep (or clear) the topic's retained message, published by `owner`'s account;
        None when that would take the account past its retained bytes (refused, counted
        and logged). The bytes of a message replaced or cleared go back to its owner."""
        old_owner, old_size = self.retained.held(message.topic)
        if message.payload and owner is not None:
            usage = self.accounts.usage(owner)
            kept = usage.retained - (old_size if old_owner == owner else 0)
            if kept + message.size > self.accounts.limits.retained_bytes:
                self.accounts.refuse(owner, RETAINED, f"{usage.retained} bytes retained")
                return None
        if old_owner is not None:
            self.accounts.usage(old_owner).retained -= old_size
        if message.payload and owner is not None:
            self.accounts.usage(owner).retained += message.size
        return self.retained.set(message, owner)

    def load_retained(self) -> None:
        """The stored retained messages, each counted against the account that published it."""
        for owner, size in self.retained.load().items():
            self.accounts.usage(owner).retained += size

    def subscribe(self, session: ClientSession, wanted: Sequence[tuple[str, int]]) -> list[int]:
        """The granted QoS of each filter, or 0x80 for one the client may not have or past
        the session's `max_subscriptions`. A persistent session is stored once for the
        whole packet, not once per filter, and not at all when the packet changed nothing
        (the same filters at the same QoS, as a client does again after each reconnect)."""
        held = session.subscriptions
        before = [held.get(topic_filter) for topic_filter, _ in wanted]
        granted = [self._add(session, topic_filter, qos) for topic_filter, qos in wanted]
        over = granted.count(_OVER_LIMIT)
        if over:
            granted = [REFUSED if qos == _OVER_LIMIT else qos for qos in granted]
            limit = f"past the limit of {self.limits.max_subscriptions} subscriptions per session"
            self.refusal(session, "subscribe", f"{over} filters", 0, 0, limit)  # throttled
        changed = any(held.get(f) != was for (f, _), was in zip(wanted, before, strict=True))
        if session.persistent and changed:
            self.save_subscriptions(session)
        return granted

    def unsubscribe(self, session: ClientSession, topic_filters: Iterable[str]) -> None:
        """Remove filters (those the session does not hold are ignored); a persistent
        session is stored once for the whole packet."""
        removed = [f for f in topic_filters if self._remove(session, f)]
        if removed and session.persistent:
            self.save_subscriptions(session)

    def save_subscriptions(self, session: ClientSession) -> None:
        """Store a persistent session's subscriptions. At most one such write per session
        waits for the writer at a time: a change made meanwhile is stored by one more write
        once it is done, so a client sending SUBSCRIBE after SUBSCRIBE cannot queue more
        than two writes of its session, whatever its pace."""
        if session.key in self._saving:
            self._resave.add(session.key)
            return
        self._saving.add(session.key)
        saved = asyncio.ensure_future(self.persist(session))
        saved.add_done_callback(lambda _: self._saved(session))

    def _saved(self, session: ClientSession) -> None:
        self._saving.discard(session.key)
        if session.key in self._resave:
            self._resave.discard(session.key)
            if session.persistent and not session.revoked:
                self.save_subscriptions(session)

    def _add(self, session: ClientSession, topic_filter: str, qos: int) -> int:
        refusal = acl.subscribe_refusal(session.client, topic_filter)
        if refusal is not None:
            self.stats.refused_subscriptions += 1
            self.refusal(session, "subscribe", topic_filter, qos, 0, refusal)
            return REFUSED
        held = session.subscriptions
        if topic_filter not in held and len(held) >= self.limits.max_subscriptions:
            self.stats.refused_subscriptions += 1
            return _OVER_LIMIT
        held[topic_filter] = qos
        self.tree.add(session, topic_filter, qos)
        return qos

    def _remove(self, session: ClientSession, topic_filter: str) -> bool:
        if session.subscriptions.pop(topic_filter, None) is None:
            return False
        self.tree.remove(session, topic_filter)
        return True

    def forget(self, session: ClientSession) -> None:
        """The session ends: its subscriptions and queues go."""
        for topic_filter in session.subscriptions:
            self.tree.remove(session, topic_filter)
        session.subscriptions.clear()
        session.clear()

    def refusal(
        self, session: ClientSession, action: str, topic: str, qos: int, size: int, reason: str
    ) -> None:
        count = self.stats.refused_publishes + self.stats.refused_subscriptions
        if count <= LOGGED_REFUSALS or count % 1000 == 0:
            log.warning(
                "mqtt %s refused (%s): client %s (%s %s), topic %r, qos %d, %d bytes (%d refusals)",
                action,
                reason,
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
