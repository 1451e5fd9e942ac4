"""amqtt's per-connection protocol handler, with our reader loop (embedded_broker/inbound.py)
in place of its own, a keep-alive it does not enforce, and its sends routed through the
session's bounded queue."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, cast

from amqtt.mqtt.disconnect import DisconnectPacket
from amqtt.mqtt.protocol.broker_handler import BrokerProtocolHandler
from amqtt.session import OutgoingApplicationMessage

from edge.devices import presence
from edge.devices.mqtt_clients import ClientDirectory
from embedded_broker.frames import Message, ProtocolError
from embedded_broker.inbound import Inbound
from embedded_broker.links import ChunkReader, Link
from embedded_broker.router import Router
from embedded_broker.sessions import ClientSession
from embedded_broker.turns import Turn

KEEPALIVE_GRACE = 1.5  # MQTT-3.1.2-24: one and a half keep-alive periods
log = logging.getLogger("edge.mqtt")


class EdgeHandler(BrokerProtocolHandler):
    def prepare(
        self, router: Router, session: ClientSession, directory: ClientDirectory, turn: Turn
    ) -> None:
        self.router = router
        self.client_session = session
        self.directory = directory
        self.finished = asyncio.Event()  # set once the broker is done with the connection
        self._idle: asyncio.TimerHandle | None = None
        self._inbound: Inbound | None = None
        self.end_reason: str | None = None  # why the connection ended, for the log
        self.end_cause: str | None = None  # ... as presence names it (edge/devices/presence.py)
        # Told once the connection holds its session (the broker marks the device online
        # then, so what is sent on that news finds the session attached, not away).
        self.on_attached: Callable[[], None] = lambda: None
        self.attached = False
        self.turn = turn  # its client ID's turn, given back once attached (turns.py)

    async def start(self) -> None:
        """amqtt makes its disconnect waiter only once its reader has started: a
        connection that ended before that (a client that closed its socket while its
        CONNECT waited for a takeover, a connection taken over as soon as it attached) was
        never seen to end, and its task held a connection slot for good."""
        await super().start()
        if self._reader_stopped.is_set():
            await self.handle_connection_closed()

    async def _reader_loop(self) -> None:
        """Replaces amqtt's: same contract (ready, then closed, then stopped)."""
        self._reader_ready.set()
        session, link = self.client_session, cast(Link, self.writer)
        session.on_overflow = lambda: self.end("its queue is full (a slow client)")
        session.on_room = lambda: self.router.inboxes.room(session.client)
        session.attach(link)
        if session.subscriptions:  # a stored session is back: what waits for it (a delta)
            held = list(session.subscriptions)
            self.router.inboxes.subscribed(session.client, held, session.told)
        self.attached = True
        self.on_attached()
        self._inbound = Inbound(self.router, session, link, self.directory, self._disconnect)
        self._watch_idle()
        try:
            await self._inbound.serve(cast(ChunkReader, self.reader))
        except ProtocolError as exc:
            self.end_reason = self.end_reason or f"broke the protocol: {exc}"
        except asyncio.CancelledError:
            pass
        except (ConnectionError, OSError):
            pass
        except Exception:
            self.end_reason = "unexpected error"
            log.exception("mqtt client %s: unexpected error, disconnected", session.key)
        finally:
            self._closed()
        await self.handle_connection_closed()
        self._reader_stopped.set()
        await self.stop()

    async def mqtt_publish(
        self,
        topic: str,
        data: bytes | bytearray,
        qos: int | None,
        retain: bool,
        ack_timeout: Any = None,
    ) -> OutgoingApplicationMessage:
        """amqtt's own sends (none on our paths) take the same bounded queue."""
        level = qos or 0
        self.client_session.offer(Message.of(topic, bytes(data), level), level, retain)
        return OutgoingApplicationMessage(None, topic, qos, data, retain)

    def end(self, reason: str, cause: str = presence.LOST) -> None:
        """Drop the connection now (a slow client, a takeover, revocation)."""
        self.end_reason = self.end_reason or reason
        self.end_cause = self.end_cause or cause
        if self.writer is not None:
            cast(Link, self.writer).abort()

    async def _disconnect(self) -> None:
        """DISCONNECT: amqtt ends the session without publishing the will (MQTT-3.14.4-3)."""
        self.end_reason = self.end_reason or "the client disconnected"
        self.end_cause = self.end_cause or presence.CLEAN
        await self.handle_disconnect(DisconnectPacket())

    def _closed(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
        session = self.client_session
        self.router.settle(session)  # the connection's last counts reach the meter
        if session.link is self.writer:
            session.detach()
        if self.session is not None and self.session.clean_session:
            self.router.forget(session)
        elif session.persistent and not session.revoked and session.link is None:
            self.router.persist(session, time.time(), messages=True)  # kept while away

    def _watch_idle(self) -> None:
        """Close a client silent for 1.5 keep-alive periods (amqtt only logs it)."""
        keep_alive = self.session.keep_alive if self.session is not None else 0
        if keep_alive <= 0 or self._inbound is None:
            return
        limit = keep_alive * KEEPALIVE_GRACE
        loop = asyncio.get_running_loop()
        idle = loop.time() - self._inbound.last_read
        if idle >= limit:
            self.end(f"silent for {limit:g} s, past its keep-alive", presence.KEEPALIVE)
            return
        self._idle = loop.call_later(limit - idle, self._watch_idle)
