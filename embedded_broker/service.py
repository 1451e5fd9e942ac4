"""The broker as `edge serve` runs it: started with the HTTP server on the same event loop
(docs/mqtt.md says why), stopped with it, and watching the registry's revocation epoch.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import socket
from collections.abc import Callable

from amqtt.errors import BrokerError

from edge.devices.mqtt_clients import ClientDirectory, MqttClient
from edge.devices.presence import Presence
from edge.kernel.config import Config
from embedded_broker import listeners
from embedded_broker.accounts import AccountLimits
from embedded_broker.admission import ACCOUNT, ADDRESS
from embedded_broker.broker import EdgeBroker
from embedded_broker.frames import Message
from embedded_broker.inbox import Inbox, RoomWaiter
from embedded_broker.persistence import SessionStore
from embedded_broker.retained import RetainedStore
from embedded_broker.router import Router
from embedded_broker.sessions import Limits, Stats

EPOCH_SECONDS = 0.5
log = logging.getLogger("edge.mqtt")


def limits(config: Config) -> Limits:
    return Limits(
        queue_messages=config.mqtt_queue_messages,
        queue_bytes=config.mqtt_queue_bytes,
        max_message_bytes=config.mqtt_max_message_bytes,
        rate_limit=config.mqtt_rate_limit,
        max_connections=config.mqtt_max_connections,
        max_subscriptions=config.mqtt_max_subscriptions,
        max_connections_per_address=config.mqtt_max_connections_per_address,
    )


def account_limits(config: Config) -> AccountLimits:
    return AccountLimits(
        sessions=config.mqtt_account_sessions,
        connections=config.mqtt_account_connections,
        queue_bytes=config.mqtt_account_queue_bytes,
        retained_bytes=config.mqtt_account_retained_bytes,
    )


class MqttService:
    def __init__(
        self,
        config: Config,
        directory: ClientDirectory,
        store: RetainedStore,
        sessions: SessionStore,
        presence: Presence | None = None,
    ) -> None:
        self.config = config
        self.directory = directory
        self.presence = presence
        self.router = Router(limits(config), store, sessions, account_limits(config))
        self.broker: EdgeBroker | None = None
        # Listeners bound beforehand by `edge serve` (edge/app.py `bind`), by name; a
        # listener without one binds its port at start.
        self.sockets: dict[str, socket.socket] = {}
        self._stop = asyncio.Event()
        self._watcher: asyncio.Task[None] | None = None
        self._started = False  # start() was called (the broker is `starting` until then)

    @property
    def stats(self) -> Stats:
        return self.router.stats

    async def start(self) -> None:
        """Bind every enabled listener, or none: a port in use fails the start with the
        system's own error."""
        self._started = True
        enabled = listeners.enabled(self.config)
        if not enabled:
            return
        for noisy in ("amqtt", "transitions"):  # a line per connection and state change
            logging.getLogger(noisy).setLevel(max(logging.WARNING, log.getEffectiveLevel()))
        logging.getLogger("amqtt.broker").addFilter(_no_start_traceback)
        self.router.load_retained()
        broker = EdgeBroker(
            listeners.amqtt_config(self.config, enabled),
            self.router,
            self.directory,
            self.sockets,
            self.presence,
        )
        try:
            await broker.start()
        except BrokerError as exc:
            await broker.close_listeners()
            cause = exc.__cause__
            raise (cause if isinstance(cause, OSError) else exc) from None
        self.broker = broker
        restored = broker.restore(self.router.sessions.load())
        self._watcher = asyncio.create_task(self._watch())
        log.info(
            "mqtt broker started: %d retained messages, %d persistent sessions",
            len(self.router.retained),
            restored,
        )

    async def stop(self) -> None:
        if self.broker is None:
            return
        self._stop.set()
        if self._watcher is not None:
            await self._watcher
        await self.broker.shutdown()
        self.broker = None

    def state(self) -> str | None:
        """The broker as /v2/health reports it; None when every listener is turned off.
        `starting` only before start() (the health probe's first reading at start)."""
        if not listeners.enabled(self.config):
            return None
        if self.broker is None:
            return "stopped" if self._started else "starting"
        return "ok" if self.broker.listening() else "not listening"

    def figures(self) -> tuple[int, dict[str, int]]:
        """Open connections, and the counters since start (GET /metrics)."""
        live = self.broker.live if self.broker is not None else 0
        refused = self.router.accounts.refused
        accounts = {f"account_{limit}_refusals": count for limit, count in refused.items()}
        if self.broker is not None:
            admitted = self.broker.admission.refused
            accounts["account_connections_refusals"] = admitted[ACCOUNT]
            accounts["address_refusals"] = admitted[ADDRESS]
        return live, {**dataclasses.asdict(self.stats), **accounts}

    def notify_device(self, device_id: str, topic: str, payload: bytes) -> int:
        """Publish a server notice (QoS 1, not retained) to one device's own sessions; a
        persistent session of the device that is offline gets it when it comes back."""
        return self.router.route_to_device(device_id, Message.of(topic, payload, 1))

    def notify_connected(self, device_id: str, topic: str, payload: bytes) -> int:
        """The same notice to the device's sessions whose clients are connected now only
        (a command someone waits for: docs/commands.md)."""
        message = Message.of(topic, payload, 1)
        return self.router.route_to_device(device_id, message, connected=True)

    def notify_spare(self, device_id: str, topic: str, payload: bytes) -> int:
        """The notice to the device's sessions, connected or away, that have room for it
        now; one that has none is left alone (not cut off as a slow client): the sender
        keeps the notice and offers it again (a queued command: docs/commands.md)."""
        message = Message.of(topic, payload, 1)
        return self.router.route_to_device(device_id, message, spare=True)

    def publish_where(
        self, topic: str, payload: bytes, may_receive: Callable[[MqttClient], bool]
    ) -> int:
        """Publish a server message (QoS 1, not retained) to the sessions subscribed to
        `topic` whose client `may_receive` it (a data change: docs/mqtt.md)."""
        return self.router.route_where(Message.of(topic, payload, 1), may_receive)

    def keeps_session(self, device_id: str) -> bool:
        """Whether the device has a persistent session here (connected or not)."""
        if self.broker is None:
            return False
        return self.broker.keeps_session(device_id)

    def add_inbox(self, inbox: Inbox) -> None:
        """A service that answers requests devices publish on their own topics."""
        self.router.inboxes.inboxes.append(inbox)

    def add_room_waiter(self, waiter: RoomWaiter) -> None:
        """A sender told when a session that refused it for want of room has room again."""
        self.router.inboxes.waiters.append(waiter)

    def published(self) -> dict[str, int]:
        """MQTT messages published by organization since the last call (billing)."""
        if self.broker is not None:
            return self.broker.published()
        return self.router.take_published()

    def recheck(self) -> int:
        """Check every session against the registry now (the watcher does it when the
        epoch moves); for callers in this process that have just revoked something."""
        return self.broker.recheck() if self.broker is not None else 0

    async def _watch(self) -> None:
        epoch = self._epoch()
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), EPOCH_SECONDS)
            now = self._epoch()
            if now is not None and now != epoch:
                epoch = now
                self._recheck()

    def _epoch(self) -> int | None:
        try:
            return self.directory.epoch()
        except Exception:  # the registry failing must not stop the watch
            log.exception("mqtt: the revocation epoch could not be read")
            return None

    def _recheck(self) -> None:
        try:
            self.recheck()
        except Exception:
            log.exception("mqtt: live sessions could not be checked against the registry")


def _no_start_traceback(record: logging.LogRecord) -> bool:
    """A failed start (a port in use) is reported once, by `edge serve`, as one line; a
    refused connection once, by embedded_broker/connections.py (amqtt repeated it)."""
    text = record.getMessage()
    return text != "Broker startup failed" and not text.startswith(
        "Failed to initialize client session"
    )
