"""Tunnels, from the device's side (docs/tunnels.md): `edge agent` serves them, and so does
`edge tunnel agent`, its alias with the tunnels alone.

For each `open` notice on `<namespace>/tunnels` it asks the server for its end's token (with
its API key: the notice carries none), then connects out to the server's control channel
for that tunnel with it; when a client opens a stream, it connects to the local service the
name maps to (`[tunnels.services]`, `SSH = "22"`) and opens the stream's WebSocket. Nothing
listens on the device. A `close` notice, or the server dropping the control channel, ends
the tunnel here.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from typing import Any

import aiohttp

from edge_agent.bridge import MAX_FRAME, bridge
from edge_agent.link import Link, Message, say
from edge_agent.server_api import tls
from edge_agent.settings import Settings

HEARTBEAT = 20.0


class Tunnels:
    name = "tunnels"

    def __init__(self, settings: Settings, link: Link) -> None:
        self.settings = settings
        self.link = link
        self.tunnels: dict[str, asyncio.Task[None]] = {}
        self._session: aiohttp.ClientSession | None = None

    def filters(self) -> list[str]:
        return [f"{self.settings.namespace}/tunnels"]

    async def connected(self) -> None:
        return None  # a notice that came while away waits in the persistent session

    async def handle(self, message: Message) -> None:
        try:
            self._notice(message.payload)
        finally:
            self.link.ack(message)

    async def close(self) -> None:
        for task in self.tunnels.values():
            task.cancel()
        await asyncio.gather(*self.tunnels.values(), return_exceptions=True)
        if self._session is not None:
            await self._session.close()

    def _notice(self, payload: bytes) -> None:
        try:
            notice = json.loads(payload)
            action, tunnel_id = notice["action"], str(notice["uuid"])
        except (ValueError, KeyError, TypeError):
            say("ignored a notice that is not a tunnel notice")
            return
        if action == "open" and tunnel_id not in self.tunnels:
            task = asyncio.create_task(self._tunnel(tunnel_id))
            self.tunnels[tunnel_id] = task
            task.add_done_callback(lambda _: self.tunnels.pop(tunnel_id, None))
        elif action == "close" and tunnel_id in self.tunnels:
            self.tunnels[tunnel_id].cancel()

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    async def _token(self, url: str) -> str:
        """The device end's token, asked for with the device's API key."""
        key = {"Authorization": f"Bearer {self.settings.api_key}"}
        async with self._http().post(f"{url}/agent/token", headers=key, ssl=self._ssl()) as r:
            body = await r.json(content_type=None)
            if r.status != 201:
                raise aiohttp.ClientError(f"{r.status} {body.get('message', '')}".strip())
            return str(body["destination_token"])

    async def _tunnel(self, tunnel_id: str) -> None:
        url = f"{self.settings.server}/v2/tunnels/{tunnel_id}"
        streams: set[asyncio.Task[None]] = set()
        try:
            headers = {"Authorization": f"Bearer {await self._token(url)}"}
            control = await self._http().ws_connect(
                f"{url}/agent", headers=headers, heartbeat=HEARTBEAT, ssl=self._ssl()
            )
        except (aiohttp.ClientError, ValueError) as failed:
            say(f"tunnel {tunnel_id}: cannot connect: {failed}")
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
        stream_id, service = str(asked["stream"]), str(asked["service"])
        target = self.settings.services.get(service.casefold())
        if target is None:
            await _refuse(control, stream_id, f"this device offers no service {service}")
            return
        try:
            reader, writer = await asyncio.open_connection(*target)
        except OSError as failed:
            await _refuse(control, stream_id, f"{service}: {failed.strerror or failed}")
            return
        try:
            ws = await self._http().ws_connect(
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
        return tls(self.settings.ca_file)


async def _refuse(control: aiohttp.ClientWebSocketResponse, stream_id: str, reason: str) -> None:
    say(reason)
    await control.send_str(json.dumps({"type": "refuse", "stream": stream_id, "reason": reason}))
