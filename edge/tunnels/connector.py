"""`edge tunnel connect`: the technician's side of a tunnel.

Listens on a local address and carries each accepted TCP connection through the tunnel as
a stream of its own (a WebSocket to `/v2/tunnels/<id>/connect?service=<name>`, with the
tunnel's client access token as the bearer): an SSH session and an `scp` at once are two
streams. A refusal (wrong or expired token, no device connected, too many streams) closes
that connection and is reported on standard error.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import sys
from dataclasses import dataclass

import aiohttp

from edge.tunnels.bridge import MAX_FRAME, bridge

log = logging.getLogger("edge.tunnel.connect")
REFUSALS = {
    400: "the tunnel was not opened for this service",
    401: "the token is wrong, or the tunnel is closed or expired",
    503: "the device is not connected or could not open the service, or the tunnel has"
    " its most streams",
}


@dataclass(frozen=True)
class Connect:
    server: str  # the edge server's base URL, e.g. https://edge.plant.lan:8443
    tunnel_id: str
    token: str
    service: str
    host: str = "127.0.0.1"
    port: int = 2222
    ssl: ssl.SSLContext | None = None

    @property
    def url(self) -> str:
        return f"{self.server.rstrip('/')}/v2/tunnels/{self.tunnel_id}/connect"


class Connector:
    def __init__(self, config: Connect) -> None:
        self.config = config
        self._session: aiohttp.ClientSession | None = None

    async def run(self, stop: asyncio.Event) -> None:
        self._session = aiohttp.ClientSession()
        server = await asyncio.start_server(self._accept, self.config.host, self.config.port)
        try:
            host, port = server.sockets[0].getsockname()[:2]
            print(
                f"tunnel {self.config.tunnel_id}: {self.config.service} on {host}:{port}",
                flush=True,
            )
            await stop.wait()
        finally:
            server.close()
            await self._session.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._session is not None
        try:
            ws = await self._session.ws_connect(
                self.config.url,
                params={"service": self.config.service},
                headers={"Authorization": f"Bearer {self.config.token}"},
                max_msg_size=MAX_FRAME,
                ssl=self.config.ssl if self.config.ssl is not None else True,
            )
        except aiohttp.WSServerHandshakeError as refused:
            why = REFUSALS.get(refused.status, refused.message)
            _say(f"connection refused by the server ({refused.status}): {why}")
            writer.close()
            return
        except aiohttp.ClientError as failed:
            _say(f"cannot reach the server: {failed}")
            writer.close()
            return
        await bridge(ws, reader, writer)


def _say(text: str) -> None:
    print(f"edge tunnel connect: {text}", file=sys.stderr, flush=True)
