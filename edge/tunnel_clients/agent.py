"""`edge tunnel agent`: the device's side of its tunnels.

Connects to the site's MQTT broker as the device (its ID and API key), with a persistent
session, and subscribes to `<root_scope>/devices/<device_id>/tunnels`. For each `open`
notice it asks the server for its end's token (with its API key: the notice carries none),
then connects out to the server's control channel for that tunnel with it; when a client
opens a stream, it connects to the local service the name maps to (`--service SSH=22`) and
opens the stream's WebSocket. Nothing listens on the device. A `close` notice, or the server
dropping the control channel, ends the tunnel here.
If the broker goes away the agent connects again, every few seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import aiohttp
from amqtt.client import MQTTClient

from edge.tunnel_clients.bridge import MAX_FRAME, bridge

log = logging.getLogger("edge.tunnel.agent")
RETRY_SECONDS = 3.0
HEARTBEAT = 20.0


@dataclass(frozen=True)
class AgentConfig:
    server: str
    device_id: str
    api_key: str
    root_scope: str
    services: dict[str, tuple[str, int]]  # case-folded name -> local host and port
    mqtt_url: str = ""
    ca_file: str | None = None  # the site CA (ca.pem), for https:// and mqtts://

    @property
    def topic(self) -> str:
        return f"{self.root_scope}/devices/{self.device_id}/tunnels"

    def broker(self) -> str:
        """The MQTT URL with the device's credentials (mqtt://host:1883 by default)."""
        given = self.mqtt_url or f"mqtt://{urlsplit(self.server).hostname}:1883"
        parts = urlsplit(given)
        credentials = f"{quote(self.device_id, safe='')}:{quote(self.api_key, safe='')}"
        return f"{parts.scheme}://{credentials}@{parts.hostname}:{parts.port or 1883}"


class Agent:
    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.tunnels: dict[str, asyncio.Task[None]] = {}
        self._session: aiohttp.ClientSession | None = None

    async def run(self, stop: asyncio.Event) -> None:
        self._session = aiohttp.ClientSession()
        try:
            while not stop.is_set():
                with contextlib.suppress(Exception):
                    await self._listen(stop)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), RETRY_SECONDS)
        finally:
            for task in self.tunnels.values():
                task.cancel()
            await asyncio.gather(*self.tunnels.values(), return_exceptions=True)
            await self._session.close()

    async def _listen(self, stop: asyncio.Event) -> None:
        client = MQTTClient(
            client_id=f"tunnel-agent-{self.config.device_id}",
            config={"auto_reconnect": False, "keep_alive": 30},
        )
        try:
            await client.connect(
                self.config.broker(), cleansession=False, cafile=self.config.ca_file
            )
        except Exception as failed:
            _say(f"cannot connect to the MQTT broker: {failed!r}")
            raise
        try:
            await client.subscribe([(self.config.topic, 1)])
            print(
                f"agent for device {self.config.device_id}: waiting on {self.config.topic}",
                flush=True,
            )
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    message = await client.deliver_message(timeout_duration=1.0)
                    if message is not None and message.data is not None:
                        self._notice(bytes(message.data))
        finally:
            with contextlib.suppress(Exception):
                await client.disconnect()

    def _notice(self, payload: bytes) -> None:
        try:
            notice = json.loads(payload)
            action, tunnel_id = notice["action"], str(notice["uuid"])
        except (ValueError, KeyError, TypeError):
            _say("ignored a notice that is not a tunnel notice")
            return
        if action == "open" and tunnel_id not in self.tunnels:
            task = asyncio.create_task(self._tunnel(tunnel_id))
            self.tunnels[tunnel_id] = task
            task.add_done_callback(lambda _: self.tunnels.pop(tunnel_id, None))
        elif action == "close" and tunnel_id in self.tunnels:
            self.tunnels[tunnel_id].cancel()

    async def _token(self, url: str) -> str:
        """The device end's token, asked for with the device's API key."""
        assert self._session is not None
        key = {"Authorization": f"Bearer {self.config.api_key}"}
        async with self._session.post(f"{url}/agent/token", headers=key, ssl=self._ssl()) as r:
            body = await r.json(content_type=None)
            if r.status != 201:
                raise aiohttp.ClientError(f"{r.status} {body.get('message', '')}".strip())
            return str(body["destination_token"])

    async def _tunnel(self, tunnel_id: str) -> None:
        assert self._session is not None
        url = f"{self.config.server.rstrip('/')}/v2/tunnels/{tunnel_id}"
        streams: set[asyncio.Task[None]] = set()
        try:
            headers = {"Authorization": f"Bearer {await self._token(url)}"}
            control = await self._session.ws_connect(
                f"{url}/agent", headers=headers, heartbeat=HEARTBEAT, ssl=self._ssl()
            )
        except aiohttp.ClientError as failed:
            _say(f"tunnel {tunnel_id}: cannot connect: {failed}")
            return
        print(f"tunnel {tunnel_id}: connected", flush=True)
        try:
            async for message in control:
                if message.type != aiohttp.WSMsgType.TEXT:
                    break
                asked = json.loads(message.data)
                if asked.get("type") == "stream":
                    task = asyncio.create_task(self._stream(url, headers, control, asked))
                    streams.add(task)
                    task.add_done_callback(streams.discard)
        finally:
            print(f"tunnel {tunnel_id}: closed", flush=True)
            for task in list(streams):
                task.cancel()
            await asyncio.gather(*streams, return_exceptions=True)
            await control.close()

    async def _stream(
        self,
        url: str,
        headers: dict[str, str],
        control: aiohttp.ClientWebSocketResponse,
        asked: dict[str, Any],
    ) -> None:
        assert self._session is not None
        stream_id, service = str(asked["stream"]), str(asked["service"])
        target = self.config.services.get(service.casefold())
        if target is None:
            await _refuse(control, stream_id, f"this device offers no service {service}")
            return
        try:
            reader, writer = await asyncio.open_connection(*target)
        except OSError as failed:
            await _refuse(control, stream_id, f"{service}: {failed.strerror or failed}")
            return
        try:
            ws = await self._session.ws_connect(
                f"{url}/agent/streams/{stream_id}",
                headers=headers,
                max_msg_size=MAX_FRAME,
                ssl=self._ssl(),
            )
        except aiohttp.ClientError:
            writer.close()
            return
        await bridge(ws, reader, writer)

    def _ssl(self) -> ssl.SSLContext | bool:
        if self.config.ca_file is None:
            return True
        return ssl.create_default_context(cafile=self.config.ca_file)


async def _refuse(control: aiohttp.ClientWebSocketResponse, stream_id: str, reason: str) -> None:
    _say(reason)
    await control.send_str(json.dumps({"type": "refuse", "stream": stream_id, "reason": reason}))


def _say(text: str) -> None:
    print(f"edge tunnel agent: {text}", file=sys.stderr, flush=True)
