"""The agent's one MQTT connection, as the device, with paho-mqtt: by its TLS client
certificate and key when the settings name them (mqtts://, the site CA), else with user
name: its ID, password: its API key.

- A persistent session (clean session off, a fixed client ID): the broker keeps the
  subscriptions and the QoS 1 messages sent while the agent is away (a queued command, a
  tunnel's notice, a twin's delta) and delivers them when it is back, across restarts of
  either side.
- Reconnects with exponential backoff and jitter (`backoff.py`), for ever: a refused
  sign-in is said once per attempt on standard error and tried again.
- Messages are acknowledged (PUBACK) by whoever handles them, once handled (`ack`): a
  message the agent took but died before handling is delivered again.
- After each connection, once the broker granted the subscriptions (SUBACK), `connected`
  is called, so features catch up with requests the broker will answer.

paho's network loop runs in a thread of its own; what it hears is handed to the asyncio
loop, and the asyncio side only calls paho's thread-safe `publish`, `ack` and `disconnect`.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode

from edge_agent.backoff import Backoff
from edge_agent.server_api import context
from edge_agent.settings import Settings

KEEPALIVE = 30
QOS = 1


@dataclass(frozen=True)
class Message:
    topic: str
    payload: bytes
    mid: int
    qos: int
    connection: int  # which connection delivered it: only that one can acknowledge it


class Link:
    def __init__(
        self,
        settings: Settings,
        filters: list[str],
        deliver: Callable[[Message], None],
        connected: Callable[[], None],
    ) -> None:
        self.settings = settings
        self.filters = filters
        self._deliver = deliver
        self._connected = connected
        self._backoff = Backoff(settings.reconnect_min, settings.reconnect_max)
        self._stop = threading.Event()
        self._connection = 0
        self._subscribing: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        mqtts = urlsplit(settings.mqtt_url).scheme == "mqtts"
        self._tls = context(settings.ca_file) if mqtts else None
        self._client = self._new_client()

    async def run(self, stop: asyncio.Event) -> None:
        """Keeps the connection up until `stop` is set, then disconnects cleanly."""
        self._loop = asyncio.get_running_loop()
        thread = threading.Thread(target=self._network, name="edge-agent-mqtt", daemon=True)
        thread.start()
        try:
            await stop.wait()
        finally:
            self._stop.set()
            self._client.disconnect()
            await asyncio.to_thread(thread.join)

    def publish(self, topic: str, payload: bytes) -> None:
        """At QoS 1; while the broker is away paho keeps it and sends it on reconnecting."""
        self._client.publish(topic, payload, qos=QOS)

    def reconnect(self) -> None:
        """Drops the connection so that the next one signs in with the certificate and key
        on disk now (a renewal swapped them)."""
        self._client.disconnect()

    def ack(self, message: Message) -> None:
        if message.qos and message.connection == self._connection:
            self._client.ack(message.mid, message.qos)

    def _new_client(self) -> paho.Client:
        client = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.settings.client_id,
            clean_session=False,
            protocol=paho.MQTTv311,
            manual_ack=True,
        )
        settings = self.settings
        if settings.certificate_file is None:
            client.username_pw_set(settings.device_id, settings.api_key)
        if self._tls is not None:
            client.tls_set_context(self._tls)
        client.on_connect = self._on_connect
        client.on_subscribe = self._on_subscribe
        client.on_message = self._on_message
        return client

    # -- in paho's thread -----------------------------------------------------------------
    def _network(self) -> None:
        parts = urlsplit(self.settings.mqtt_url)
        default = 8883 if parts.scheme == "mqtts" else 1883
        host, port = parts.hostname or "localhost", parts.port or default
        while not self._stop.is_set():
            if self._load_pair():
                self._connect(host, port)
            if not self._stop.is_set():
                self._stop.wait(self._backoff.next_wait())

    def _connect(self, host: str, port: int) -> None:
        """One connection, kept until it is lost or the agent stops."""
        try:
            self._client.connect(host, port, KEEPALIVE)
        except OSError as failed:
            say(f"cannot reach the MQTT broker at {host}:{port}: {failed}")
            return
        while not self._stop.is_set():
            if self._client.loop(timeout=1.0) != MQTTErrorCode.MQTT_ERR_SUCCESS:
                return

    def _load_pair(self) -> bool:
        """The client certificate and key as they are on disk now, read before every
        connection: a renewal (renewal.py) swaps the files while the agent runs."""
        settings = self.settings
        if self._tls is None or not settings.certificate_file or not settings.key_file:
            return True
        try:
            self._tls.load_cert_chain(settings.certificate_file, settings.key_file)
        except (OSError, ValueError) as failed:  # ssl.SSLError is an OSError
            say(f"the device's certificate and key: {failed}")
            return False
        return True

    def _on_connect(self, client: paho.Client, _: Any, flags: Any, reason: Any, __: Any) -> None:
        if reason.is_failure:
            say(f"the MQTT broker refused the device: {reason}")
            return
        self._backoff.succeeded()
        self._connection += 1
        result, mid = client.subscribe([(topic, QOS) for topic in self.filters])
        self._subscribing = mid if result == MQTTErrorCode.MQTT_ERR_SUCCESS else None

    def _on_subscribe(self, _: paho.Client, __: Any, mid: int, codes: Any, ___: Any) -> None:
        if mid == self._subscribing:
            refused = [code for code in codes if code.is_failure]
            if refused:
                say(f"the broker refused a subscription: {refused[0]}")
            self._call(self._connected)

    def _on_message(self, _: paho.Client, __: Any, message: paho.MQTTMessage) -> None:
        payload = bytes(message.payload)
        got = Message(message.topic, payload, message.mid, message.qos, self._connection)
        self._call(self._deliver, got)

    def _call(self, function: Callable[..., None], *args: Any) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(function, *args)


def say(text: str) -> None:
    print(f"edge agent: {text}", file=sys.stderr, flush=True)
