"""amqtt's broker, kept for what it does well (listeners, CONNECT, session lifecycle and
expiry, takeover, will messages, shutdown) and hooked where a shared site broker needs
more. The hooks, each an override of an amqtt 0.12.1 method (pinned; a test checks they
still exist):

- `stream_connected` / `ws_connected`: the connection limits (the site's, per address
  and, once the CONNECT is authenticated, per account: embedded_broker/admission.py),
  and our links (embedded_broker/links.py) as amqtt's reader and writer.
- `_create_server_instance`: serve on the sockets `edge serve` bound before it created
  anything (edge/ops/listening.py); WebSocket listeners with bounded buffers.
- `_initialize_client_session`: authenticate before any session is touched (amqtt deletes
  or takes over an existing session by client ID before authenticating), namespace client
  IDs by account (two tenants' "sensor-1" never meet), take over a live connection
  cleanly, and a time limit on the CONNECT.
- `_broadcast_message`, `retain_message`, `add_subscription`, `_del_subscription`,
  `_del_all_subscriptions`: will messages, retained messages and subscriptions go through
  our router (topic tree, bounded queues, durable retained messages).
- `_delete_session`, `_cleanup_session`, `shutdown`: persistent sessions are stored in the
  database and read back at start (`restore`), deleted when they end or expire, kept when
  the broker stops (embedded_broker/persistence.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import time
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from functools import partial
from typing import Any, NoReturn, cast

import websockets
import websockets.asyncio.server
from amqtt.adapters import BufferReader, ReaderAdapter, WriterAdapter
from amqtt.broker import Broker
from amqtt.contexts import ListenerConfig, ListenerType
from amqtt.mqtt.connack import (
    IDENTIFIER_REJECTED,
    NOT_AUTHORIZED,
    SERVER_UNAVAILABLE,
    UNACCEPTABLE_PROTOCOL_VERSION,
    ConnackPacket,
)
from amqtt.session import Session
from amqtt.utils import gen_client_id

from edge.devices.mqtt_clients import ClientDirectory, MqttClient
from edge.devices.presence import LOST, REVOKED, STOPPING, TAKEN_OVER, Presence
from embedded_broker import acl, connections
from embedded_broker.admission import Admission, Caps, Slot
from embedded_broker.authentication import Refusal, authenticate
from embedded_broker.frames import Message
from embedded_broker.handler import EdgeHandler
from embedded_broker.links import TcpReader, TcpWriter, WsReader, WsWriter
from embedded_broker.listeners import websocket_bounds
from embedded_broker.refusal_lines import RefusalLines
from embedded_broker.router import REFUSED, Router
from embedded_broker.sessions import ClientSession
from embedded_broker.turns import Turn, Turns
from storage.mqtt_sessions import StoredSession

KEY = "edge.session"  # our state in amqtt's Session.attributes
CONNECT_SECONDS = 10.0
TAKEOVER_SECONDS = CONNECT_SECONDS  # a CONNECT's wait for its client ID's holder to end
log = logging.getLogger("edge.mqtt")
_slot: ContextVar[Slot | None] = ContextVar("mqtt_slot", default=None)  # set per connection


def state_of(session: Session) -> ClientSession | None:
    return cast(ClientSession | None, session.attributes.get(KEY))


class EdgeBroker(Broker):
    def __init__(
        self,
        config: dict[str, Any],
        router: Router,
        directory: ClientDirectory,
        sockets: Mapping[str, socket.socket] | None = None,
        presence: Presence | None = None,
    ) -> None:
        super().__init__(config)
        self.router = router
        self.directory = directory
        self.presence = presence  # told of devices' connections opening and closing
        self.sockets = dict(sockets or {})
        self.admission = Admission(_caps(router))
        self.refusal_lines = RefusalLines()  # refused connections, logged at most once a minute
        self.turns = Turns()  # one CONNECT at a time per client ID (turns.py)
        self.connections: set[EdgeHandler] = set()  # every live connection (for `recheck`)
        self._stopping = False

    # Connections

    async def stream_connected(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, listener_name: str
    ) -> None:
        slot = self._admit(writer.get_extra_info("peername"))
        if slot is None:
            writer.transport.abort()
            return
        try:
            await self._serve(listener_name, slot, TcpReader(reader), TcpWriter(writer))
        finally:
            self.admission.release(slot)

    async def ws_connected(self, websocket: Any, listener_name: str) -> None:
        slot = self._admit(websocket.remote_address)
        if slot is None:
            websocket.transport.abort()
            return
        try:
            await self._serve(listener_name, slot, WsReader(websocket), WsWriter(websocket))
        finally:
            self.admission.release(slot)

    async def _serve(
        self, listener_name: str, slot: Slot, reader: ReaderAdapter, writer: WriterAdapter
    ) -> None:
        connections.listener.set(listener_name)  # this connection's task and its log lines
        _slot.set(slot)  # claimed for its account once the CONNECT is authenticated
        await self._client_connected(listener_name, reader, writer)

    @property
    def live(self) -> int:
        return self.admission.live

    async def _create_server_instance(
        self,
        listener_name: str,
        listener_type: Any,
        address: str | None,
        port: int,
        ssl_context: ssl.SSLContext | None,
    ) -> Any:
        """A listener bound beforehand (`edge serve` binds every port before it creates
        anything) serves on its socket; any other binds its port as amqtt does. WebSocket
        listeners are bounded as TCP ones are (embedded_broker/listeners.py,
        `websocket_bounds`): the library's defaults buffered up to 16 frames of 1 MiB per
        client."""
        sock = self.sockets.pop(listener_name, None)
        if listener_type == ListenerType.WS:
            where: dict[str, Any] = {"sock": sock} if sock else {"host": address, "port": port}
            return await websockets.asyncio.server.serve(
                partial(self.ws_connected, listener_name=listener_name),
                ssl=ssl_context,
                subprotocols=[websockets.Subprotocol("mqtt")],
                **where,
                **websocket_bounds(self.router.limits.max_message_bytes),
            )
        if sock is None:
            return await super()._create_server_instance(
                listener_name, listener_type, address, port, ssl_context
            )
        return await asyncio.start_server(
            partial(self.stream_connected, listener_name=listener_name), sock=sock, ssl=ssl_context
        )

    def listening(self) -> bool:
        """Whether every listener still accepts connections (for /v2/health)."""
        servers = [getattr(server, "instance", None) for server in self._servers.values()]
        return bool(servers) and all(_serving(instance) for instance in servers)

    def _admit(self, peer: Any) -> Slot | None:
        """A slot for a new connection (embedded_broker/admission.py), or None: the site
        or the client's address holds its most connections (counted always, logged at most
        once a minute per limit and address: embedded_broker/refusal_lines.py)."""
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        slot = self.admission.admit(address)
        if isinstance(slot, Slot):
            return slot
        self.router.stats.refused_connects += 1
        count = self.refusal_lines.due((slot.limit, address))
        if count:
            where, why, more = address or "?", slot.reason, connections.repeats(count)
            log.warning("mqtt: connection from %s refused, %s%s", where, why, more)
        return None

    async def _claim(
        self, key: str, account_id: str, writer: WriterAdapter, incoming: Session, address: str
    ) -> None:
        """The connection counts as its account's, or is refused (CONNACK 3) when the
        account holds `mqtt_account_connections` already; taking over one of its own
        client IDs is always let in."""
        slot = _slot.get()
        held = self._sessions.get(key)
        replaces = held is not None and held[1] in self.connections
        if slot is None or self.admission.claim(slot, account_id, replaces):
            return
        most = self.admission.caps.per_account
        full = Refusal(SERVER_UNAVAILABLE, f"the account holds its most connections ({most})")
        await self._refuse(writer, full, incoming, address)

    async def _initialize_client_session(
        self, reader: ReaderAdapter, writer: WriterAdapter, remote_address: str, remote_port: int
    ) -> tuple[EdgeHandler, Session]:
        address = f"{remote_address}:{remote_port}"
        handler, incoming = await self._read_connect(reader, writer, address)
        epoch = self.directory.epoch()
        verdict = authenticate(self.directory, incoming, self.router.limits.max_message_bytes)
        incoming.password = None  # not kept in memory any longer than needed
        if isinstance(verdict, Refusal):
            if verdict.credentials:
                self.directory.refused(remote_address, incoming.username)
            await self._refuse(writer, verdict, incoming, address)
        key = f"{verdict.account_id}:{incoming.client_id or gen_client_id()}"
        await self._claim(key, verdict.account_id, writer, incoming, address)
        if not incoming.clean_session and not self.router.accounts.may_keep_session(
            verdict.account_id, key
        ):
            over = Refusal(IDENTIFIER_REJECTED, "the account keeps its most persistent sessions")
            await self._refuse(writer, over, incoming, address)
        turn = await self._turn(key, writer, incoming, address)
        try:
            session = await self._take_session(key, incoming, verdict)
            if self.directory.epoch() != epoch and not self.directory.still_allowed(verdict):
                revoked = Refusal(NOT_AUTHORIZED, "revoked while connecting")
                await self._refuse(writer, revoked, incoming, address)
        except BaseException:
            turn.release()
            raise
        state = state_of(session)
        assert state is not None
        handler.prepare(self.router, state, self.directory, turn)
        self.router.stats.connects += 1
        self.directory.seen(verdict.account_id)
        return handler, session

    async def _read_connect(
        self, reader: ReaderAdapter, writer: WriterAdapter, address: str
    ) -> tuple[EdgeHandler, Session]:
        """The CONNECT, read whole within CONNECT_SECONDS (embedded_broker/connections.py)
        and parsed by amqtt; any failure is logged here, once, and raised as `Refused`."""
        try:
            read = connections.read_connect(reader, self.router.limits.max_message_bytes)
            packet = await asyncio.wait_for(read, CONNECT_SECONDS)
            level = connections.unserved_level(packet)
            if level is not None:
                await self._refuse_level(writer, level, address)
            connect = EdgeHandler.init_from_connect(
                BufferReader(packet), writer, self.plugins_manager
            )
            return cast(tuple[EdgeHandler, Session], await connect)
        except connections.Refused:
            raise
        except TimeoutError:
            await writer.close()
            reason = f"no CONNECT within {CONNECT_SECONDS:g} s"
        except Exception as exc:  # amqtt's refusals (it sent a CONNACK), a malformed CONNECT
            await writer.close()
            reason = str(exc) if str(exc) not in ("", "None") else type(exc).__name__
        connections.refused(self.refusal_lines, "CONNECT", reason, address)
        raise connections.Refused(reason)

    async def _refuse_level(self, writer: WriterAdapter, level: int, address: str) -> NoReturn:
        """MQTT 3.1.1, 3.1.2.2: an unsupported protocol level gets CONNACK 1, then the
        connection is closed (MQTT 5 clients otherwise waited 10 s for nothing)."""
        self.router.stats.refused_connects += 1
        reason = f"MQTT protocol level {level} is not served, CONNACK 1"
        connections.refused(self.refusal_lines, "CONNACK 1", reason, address)
        await ConnackPacket.build(0, UNACCEPTABLE_PROTOCOL_VERSION).to_stream(writer)
        await writer.close()
        raise connections.Refused(f"protocol level {level}")

    async def _refuse(
        self, writer: WriterAdapter, refusal: Refusal, incoming: Session, address: str
    ) -> NoReturn:
        self.router.stats.refused_connects += 1
        reason = f"{refusal.reason}, CONNACK {refusal.code}"
        kind = f"CONNACK {refusal.code}"
        connections.refused(self.refusal_lines, kind, reason, address, incoming.client_id)
        await ConnackPacket.build(0, refusal.code).to_stream(writer)
        await writer.close()
        raise connections.Refused(f"connection refused: {refusal.reason}")

    async def _turn(self, key: str, writer: WriterAdapter, incoming: Session, address: str) -> Turn:
        """This CONNECT's turn at its client ID (embedded_broker/turns.py), the live
        connection holding the ID closed. Both within TAKEOVER_SECONDS: past it the CONNECT
        is refused (CONNACK 3), so no connection waits for a holder forever."""
        try:
            return await asyncio.wait_for(self._hold(key), TAKEOVER_SECONDS)
        except TimeoutError:
            late = Refusal(SERVER_UNAVAILABLE, "the connection holding the client ID did not end")
            await self._refuse(writer, late, incoming, address)

    async def _hold(self, key: str) -> Turn:
        turn = await self.turns.take(key)
        try:
            held = self._sessions.get(key)
            if held is not None:
                await self._take_over(held[1])
        except BaseException:
            turn.release()
            raise
        return turn

    async def _take_session(self, key: str, incoming: Session, client: MqttClient) -> Session:
        """The session this connection continues (clean session false) or starts, keyed by
        account and client ID; taken in the key's turn, once no live connection holds it."""
        incoming.client_id = key
        old = self._sessions.get(key)
        if incoming.clean_session or old is None:
            if old is not None:
                await self._delete_session(key)
            incoming.parent = 0
            state = self.router.new_session(key, client)
            incoming.attributes[KEY] = state
            if not incoming.clean_session:
                self.router.make_persistent(state)
                self.router.persist(state, messages=True)
            return incoming
        return self._resume(old[0], incoming, client)

    def _resume(self, session: Session, incoming: Session, client: MqttClient) -> Session:
        for name in ("will_flag", "will_message", "will_topic", "will_qos", "will_retain"):
            setattr(session, name, getattr(incoming, name))
        session.keep_alive, session.username = incoming.keep_alive, incoming.username
        session.ssl_object, session.parent = incoming.ssl_object, 1
        state = state_of(session)
        if state is None:  # a session amqtt made offline (BrokerContext.add_subscription)
            state = self.router.new_session(session.client_id, client)
            session.attributes[KEY] = state
        state.client = client
        narrowed = [f for f in state.subscriptions if acl.subscribe_refusal(client, f)]
        self.router.unsubscribe(state, narrowed)  # rights may have narrowed since
        self.router.make_persistent(state)
        self.router.persist(state, messages=True)  # connected again: what waits is in memory
        return session

    async def _take_over(self, handler: Any) -> None:
        """MQTT-3.1.4-2: the connection already holding this client ID is closed, and we
        wait until amqtt is done with it (its will sent, its session disconnected)."""
        if not isinstance(handler, EdgeHandler) or not hasattr(handler, "finished"):
            return
        handler.end("taken over by a new connection with the same client ID", TAKEN_OVER)
        await handler.finished.wait()  # bounded by the caller (_turn)

    async def _authenticate(self, session: Session, _: ListenerConfig) -> bool:
        return True  # done in _initialize_client_session, before any session was touched

    async def _handle_client_session(
        self,
        reader: ReaderAdapter,
        writer: WriterAdapter,
        client_session: Session,
        handler: EdgeHandler,
        server: Any,
        listener_name: str,
    ) -> None:
        state = state_of(client_session)
        assert state is not None
        client_id = (client_session.client_id or "").split(":", 1)[-1]
        address = f"{client_session.remote_address}:{client_session.remote_port}"
        connections.connected(state.client, client_id, address)
        handler.on_attached = lambda: self._attached(handler, state.client)
        self.connections.add(handler)
        try:
            await super()._handle_client_session(
                reader, writer, client_session, handler, server, listener_name
            )
        finally:
            handler.turn.release()  # never attached (a failed CONNACK)
            self.connections.discard(handler)
            reason = handler.end_reason or self._ended_by_broker(state)
            connections.disconnected(state.client, client_id, address, reason)
            if handler.attached:  # online only once attached (EdgeHandler.on_attached)
                self._presence(state.client, handler.end_cause or self._cause(state))
            handler.finished.set()
            if state.revoked:
                await self._delete_session(client_session.client_id)

    def _attached(self, handler: EdgeHandler, client: MqttClient) -> None:
        """The connection holds its client ID (amqtt registered it in `_sessions` before
        its CONNACK): the next CONNECT with the ID may now look at who holds it."""
        handler.turn.release()
        self._presence(client, None)

    def _presence(self, client: MqttClient, closed: str | None) -> None:
        """A device's connection opened (`closed` None) or closed, for the reason given."""
        if self.presence is None or client.kind != "device":
            return
        if closed is None:
            self.presence.opened(client.account_id, client.org_id)
        else:
            self.presence.closed(client.account_id, client.org_id, closed)

    def _cause(self, state: ClientSession) -> str:
        if state.revoked:
            return REVOKED
        return STOPPING if self._stopping else LOST

    def _ended_by_broker(self, state: ClientSession) -> str:
        if state.revoked:
            return "no longer allowed"
        return "the server is stopping" if self._stopping else "the connection was lost"

    # Messages and subscriptions, from amqtt's own flows (will messages, BrokerContext)

    async def _broadcast_message(
        self, session: Session | None, topic: str | None, data: Any, force_qos: int | None = None
    ) -> None:
        if topic:
            journaled = self.router.route(Message.of(topic, bytes(data or b""), force_qos or 0))
            if journaled is not None:
                await asyncio.gather(*journaled, return_exceptions=True)

    async def retain_message(
        self,
        source_session: Session | None,
        topic_name: str | None,
        data: Any,
        qos: int | None = None,
    ) -> None:
        if topic_name:
            state = state_of(source_session) if source_session is not None else None
            owner = state.client.account_id if state is not None else None
            stored = self.router.retain(Message.of(topic_name, bytes(data or b""), qos or 0), owner)
            if stored is not None:
                await stored

    async def add_subscription(self, subscription: tuple[str, int], session: Session) -> int:
        state = state_of(session)
        if state is None:
            return REFUSED
        return self.router.subscribe(state, [subscription])[0]

    def _del_subscription(self, a_filter: str, session: Session) -> int:
        state = state_of(session)
        if state is None or a_filter not in state.subscriptions:
            return 0
        self.router.unsubscribe(state, [a_filter])
        return 1

    async def _del_all_subscriptions(self, session: Session) -> None:
        state = state_of(session)
        if state is not None:
            self.router.forget(state)

    def published(self) -> dict[str, int]:
        """Messages published by organization since the last call (for the billing meter):
        every live session's count is settled first."""
        for session, _ in self._sessions.values():
            state = state_of(session)
            if state is not None:
                self.router.settle(state)
        return self.router.take_published()

    # Persistent sessions across restarts (embedded_broker/persistence.py)

    def restore(self, stored: Sequence[StoredSession]) -> int:
        """Persistent sessions read back at start, offline until their clients return;
        those whose owner is no longer allowed (a reset credential, a suspended or deleted
        device, an ended user session) are deleted. Returns how many were restored."""
        restored = 0
        for record in stored:
            client = self.directory.resume(
                record.kind, record.account_id, record.credential, record.stamp
            )
            if client is None:
                self.router.forget_stored(record.key)
                continue
            handler, session = self.create_offline_session(record.key)
            session.clean_session = False
            session.last_disconnect_time = int(record.disconnected_at or time.time())
            state = self.router.new_session(record.key, client)
            self.router.subscribe(state, list(record.subscriptions.items()))  # rights as now
            state.incoming_qos2.update(record.incoming_qos2)
            state.restore(record.messages)
            self.router.make_persistent(state)
            session.attributes[KEY] = state
            self._sessions[record.key] = (session, handler)
            restored += 1
        return restored

    async def _delete_session(self, client_id: str) -> None:
        entry = self._sessions.get(client_id)
        state = state_of(entry[0]) if entry is not None else None
        await super()._delete_session(client_id)
        if state is not None and state.persistent:
            await self.router.forget_stored(client_id)

    async def _cleanup_session(self, client_id: str) -> None:
        """amqtt's expiry of a session (and every session at shutdown, which must stay
        stored)."""
        entry = self._sessions.get(client_id)
        state = state_of(entry[0]) if entry is not None else None
        await super()._cleanup_session(client_id)
        if state is not None and state.persistent and not self._stopping:
            await self.router.forget_stored(client_id)

    async def shutdown(self) -> None:
        """Persistent sessions are stored with what is in flight and waiting (each client
        that is connected stores its own as its connection closes); the last write is
        committed before the broker is done."""
        self._stopping = True
        now = time.time()
        offline = [
            state.snapshot(session.last_disconnect_time or now, True)
            for session, _ in self._sessions.values()
            if (state := state_of(session)) is not None
            and state.persistent
            and not state.revoked
            and state.link is None
        ]
        stored = self.router.sessions
        with _logged_failure():  # one write per session: no write holds the writer long
            await asyncio.gather(*(stored.save([snapshot], True) for snapshot in offline))
        await super().shutdown()
        with _logged_failure():
            await stored.save([], False)  # every earlier write is committed too

    def keeps_session(self, device_id: str) -> bool:
        """Whether one of the device's sessions here is persistent (a queued command
        reaches it when the device comes back); a scan, for the rare queued command."""
        for session, _ in self._sessions.values():
            state = state_of(session)
            if state is not None and state.persistent and not state.revoked:
                if state.client.kind == "device" and state.client.account_id == device_id:
                    return True
        return False

    # Revocation

    def recheck(self) -> int:
        """Ask the registry about every session and every live connection; drop those no
        longer allowed (their will is not sent, their session is deleted). Live
        connections are walked too: the session table holds one per client ID, and a
        connection outside it must not outlive its credentials. Returns how many were
        dropped."""
        dropped = 0
        for key, (session, _) in list(self._sessions.items()):
            state = state_of(session)
            if state is not None and self._revoke(state, session):
                dropped += 1
                if state.link is None:
                    asyncio.ensure_future(self._delete_session(key))
        for handler in list(self.connections):
            state = handler.client_session
            dropped += self._revoke(state, handler.session)
            if state.revoked:
                handler.end("no longer allowed", REVOKED)
        return dropped

    def _revoke(self, state: ClientSession, session: Session | None) -> bool:
        """Mark a session no longer allowed (its will is not sent) and drop its
        connection; False when it is still allowed, or was already revoked."""
        if state.revoked or self.directory.still_allowed(state.client):
            return False
        state.revoked = True
        if session is not None:
            session.will_flag = False
        self.router.stats.revoked += 1
        log.warning("mqtt client %s no longer allowed: disconnected", state.key)
        if state.link is not None:
            state.link.abort()
        return True

    async def close_listeners(self) -> None:
        """After a failed start: amqtt leaves the listeners it had opened open."""
        for server in self._servers.values():
            await server.close_instance()


def _caps(router: Router) -> Caps:
    limits = router.limits
    per_account = router.accounts.limits.connections
    return Caps(limits.max_connections, limits.max_connections_per_address, per_account)


def _serving(instance: Any) -> bool:
    """An asyncio or websockets server answers is_serving(); an external one has none."""
    probe = getattr(instance, "is_serving", None)
    return bool(probe()) if callable(probe) else True


@contextlib.contextmanager
def _logged_failure() -> Iterator[None]:
    """Storing sessions at shutdown may fail (a closed database); stopping must not."""
    try:
        yield
    except Exception:
        log.exception("mqtt: persistent sessions could not be stored at shutdown")
