"""Real paho-mqtt clients driven from async tests: paho runs its network loop in its own
thread, and each wait here runs in a worker thread so the broker, on the test's event
loop, keeps serving. Time limits only bound a failing test; nothing is timed."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

WAIT = 15.0
# paho reports MQTT 3.1.1 CONNACK codes as MQTT 5 reason codes
CONNACK_CODES = {0: 0, 132: 1, 133: 2, 136: 3, 134: 4, 135: 5}


@dataclass
class Received:
    topic: str
    payload: bytes
    qos: int
    retain: bool


class Client:
    def __init__(
        self,
        port: int,
        client_id: str = "",
        *,
        username: str | None = None,
        password: str | None = None,
        clean: bool = True,
        tls: tuple[Path, Path | None, Path | None] | None = None,
        websockets: bool = False,
    ) -> None:
        self.port = port
        transport = "websockets" if websockets else "tcp"
        self.paho = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id,
            protocol=paho.MQTTv311,
            transport=transport,
            clean_session=clean,
        )
        if websockets:
            self.paho.ws_set_options(path="/mqtt")
        if username is not None:
            self.paho.username_pw_set(username, password)
        if tls is not None:
            ca_file, cert_file, key_file = tls
            self.paho.tls_set(ca_certs=str(ca_file), certfile=cert_file, keyfile=key_file)
        self.messages: queue.Queue[Received] = queue.Queue()
        self._connack: queue.Queue[tuple[int, bool]] = queue.Queue()
        self._granted: dict[int, list[int]] = {}
        self._subacks = threading.Condition()
        self.gone = threading.Event()
        self.paho.on_connect = self._on_connect
        self.paho.on_disconnect = self._on_disconnect
        self.paho.on_message = self._on_message
        self.paho.on_subscribe = self._on_subscribe

    async def connect(self) -> tuple[int, bool]:
        """(CONNACK code, session present)."""
        self.gone.clear()
        # in a thread: the TLS and WebSocket handshakes need the broker, on this loop
        await _wait(self.paho.connect, "127.0.0.1", self.port, 30)
        self.paho.loop_start()
        code, present = await _wait(self._connack.get, True, WAIT)
        if code:  # refused: paho's loop would keep reconnecting in the background
            await _wait(self.gone.wait, WAIT)
            self.stop()
        return code, present

    async def subscribe(self, topic_filter: str, qos: int = 0) -> int:
        """The granted QoS, or 128 when refused."""
        _, mid = self.paho.subscribe(topic_filter, qos)
        return (await _wait(self._suback, mid))[0]

    async def subscribe_many(self, filters: list[tuple[str, int]]) -> list[int]:
        """One SUBSCRIBE packet listing every filter: the SUBACK's return codes."""
        _, mid = self.paho.subscribe(filters)
        return list(await _wait(self._suback, mid))

    async def publish(self, topic: str, payload: bytes, qos: int = 0, retain: bool = False) -> None:
        """Returns once sent (QoS 0) or acknowledged (QoS 1 and 2)."""
        info = self.paho.publish(topic, payload, qos, retain)
        await _wait(info.wait_for_publish, WAIT)
        assert info.is_published()

    async def next_message(self) -> Received:
        return await _wait(self.messages.get, True, WAIT)

    async def disconnected(self) -> None:
        """Returns once the broker has closed the connection; paho's loop is stopped then,
        so it does not reconnect (and leave a socket to the collector)."""
        assert await _wait(self.gone.wait, WAIT), "the broker did not disconnect the client"
        await _wait(self.stop)

    async def close(self) -> None:
        self.paho.disconnect()
        await _wait(self.gone.wait, WAIT)
        self.stop()

    def stall(self) -> None:
        """Stop reading and writing, the connection left open (a stuck client)."""
        self.paho.loop_stop()

    def stop(self) -> None:
        """End the network loop and close the sockets (paho leaves them to the collector).

        paho's `loop_stop` only sets a flag that its loop reads between one-second waits:
        the loop is woken first (a byte on paho's own wake-up socket pair, as a publish
        does), so a stop takes no second per client."""
        self.paho._thread_terminate = True
        wake = self.paho._sockpairW
        if wake is not None:
            with contextlib.suppress(OSError):
                wake.send(b"\0")
        self.paho.loop_stop()
        self.paho._reset_sockets()

    def _on_connect(self, client: Any, userdata: Any, flags: Any, code: Any, props: Any) -> None:
        self._connack.put((CONNACK_CODES.get(code.value, code.value), flags.session_present))
        if code.value:
            client.disconnect()  # no reconnection attempts

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, code: Any, props: Any) -> None:
        self.gone.set()

    def _on_message(self, client: Any, userdata: Any, message: paho.MQTTMessage) -> None:
        self.messages.put(Received(message.topic, message.payload, message.qos, message.retain))

    def _on_subscribe(self, client: Any, userdata: Any, mid: int, codes: Any, props: Any) -> None:
        with self._subacks:
            self._granted[mid] = [code.value for code in codes]
            self._subacks.notify_all()

    def _suback(self, mid: int) -> list[int]:
        with self._subacks:
            assert self._subacks.wait_for(lambda: mid in self._granted, WAIT)
            return self._granted.pop(mid)


async def _wait(fn: Any, *args: Any) -> Any:
    return await asyncio.to_thread(fn, *args)
