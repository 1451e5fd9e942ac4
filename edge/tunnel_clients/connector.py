"""`edge tunnel connect`: the technician's side of a tunnel.

Listens on a local address and carries each accepted TCP connection through the tunnel as
a stream of its own (a WebSocket to `/v2/tunnels/<id>/connect?service=<name>`, with the
tunnel's client access token as the bearer): an SSH session and an `scp` at once are two
streams. A refusal (wrong or expired token, no device connected, too many streams) closes
that connection and is reported on standard error.

It asks the server before it listens: a token that is wrong, a tunnel closed or expired, or
a service the tunnel was not opened for is refused at once (`Refused`), not at the first
connection. While it runs it asks again every `check_every` seconds and whenever a stream
ends; once the tunnel is closed or expired it stops listening and `run` returns. The
question is the connect route without an upgrade and without a service: the server answers
401 for a token it does not accept and otherwise 400 with the tunnel's services in the
Status payload's `services` field (read as it is, never parsed from the message), and no
stream is opened, so the device is not disturbed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import sys
from dataclasses import dataclass

import aiohttp

from edge_agent.bridge import MAX_FRAME, bridge

log = logging.getLogger("edge.tunnel.connect")
REFUSALS = {
    400: "the tunnel was not opened for this service",
    401: "the token is wrong, or the tunnel is closed or expired",
    503: "the device is not connected or could not open the service, or the tunnel has"
    " its most streams",
}
CHECK_SECONDS = 5.0
# A check the server (or a proxy before it) never answers is given up after this long: at
# start the helper exits saying so, later the next check asks again. aiohttp's default
# (five minutes) held `edge tunnel connect` that long on a proxy that took the request and
# never answered.
CHECK_TIMEOUT_SECONDS = 30.0


class Refused(Exception):
    """The tunnel cannot be used as asked: say why and exit with `code` (1: the token or
    the tunnel, 2: a service the tunnel was not opened for)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Connect:
    server: str  # the edge server's base URL, e.g. https://edge.plant.lan:8443
    tunnel_id: str
    token: str
    service: str
    host: str = "127.0.0.1"
    port: int = 2222
    ssl: ssl.SSLContext | None = None
    check_every: float = CHECK_SECONDS  # seconds between asking whether it is still open
    check_timeout: float = CHECK_TIMEOUT_SECONDS  # seconds a check may wait for its answer

    @property
    def url(self) -> str:
        return f"{self.server.rstrip('/')}/v2/tunnels/{self.tunnel_id}/connect"


class Connector:
    def __init__(self, config: Connect) -> None:
        self.config = config
        self._session: aiohttp.ClientSession | None = None
        self._ask = asyncio.Event()  # a stream ended or was refused: ask about the tunnel now

    async def run(self, stop: asyncio.Event) -> None:
        """Until `stop` is set or the tunnel closes; Refused before listening when it
        cannot be used as asked."""
        self._session = aiohttp.ClientSession()
        try:
            await self._check_at_start()
            await self._serve(stop)
        finally:
            await self._session.close()

    async def _serve(self, stop: asyncio.Event) -> None:
        server = await asyncio.start_server(self._accept, self.config.host, self.config.port)
        closed = asyncio.create_task(self._until_closed())
        stopped = asyncio.create_task(stop.wait())
        try:
            host, port = server.sockets[0].getsockname()[:2]
            print(
                f"tunnel {self.config.tunnel_id}: {self.config.service} on {host}:{port}",
                flush=True,
            )
            await asyncio.wait({closed, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if closed.done():
                closed.result()  # an error that is not a closed tunnel is raised, not hidden
                print(f"tunnel {self.config.tunnel_id}: closed or expired", flush=True)
        finally:
            server.close()
            for task in (closed, stopped):
                task.cancel()

    async def _check_at_start(self) -> None:
        try:
            offered = await self._offered()
        except aiohttp.ClientError as failed:
            raise Refused(f"cannot reach the server: {failed}", 1) from None
        except TimeoutError:
            seconds = f"{self.config.check_timeout:g}"
            raise Refused(f"cannot reach the server: no answer within {seconds} s", 1) from None
        if offered is None:
            raise Refused(REFUSALS[401], 1)
        wanted = self.config.service.casefold()
        if wanted not in {name.casefold() for name in offered}:
            raise Refused(
                f"the tunnel was not opened for {self.config.service}: it offers"
                f" {', '.join(offered)}",
                2,
            )

    async def _until_closed(self) -> None:
        """Returns once the server says the tunnel is closed or expired. A server that
        cannot be reached for a while (a restart) is asked again later."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ask.wait(), self.config.check_every)
            self._ask.clear()
            with contextlib.suppress(aiohttp.ClientError, TimeoutError, Refused):
                if await self._offered() is None:
                    return

    async def _offered(self) -> list[str] | None:
        """The services the tunnel was opened for; None when the server refuses the token
        (wrong, or the tunnel closed or expired)."""
        assert self._session is not None
        async with self._session.get(
            self.config.url,
            headers={"Authorization": f"Bearer {self.config.token}"},
            ssl=self.config.ssl if self.config.ssl is not None else True,
            timeout=aiohttp.ClientTimeout(total=self.config.check_timeout),
        ) as answer:
            if answer.status == 401:
                return None
            try:  # a proxy's HTML error page while the server restarts is not an answer
                body = await answer.json(content_type=None)
            except ValueError:
                raise Refused(f"unexpected answer from the server ({answer.status})", 1) from None
        return _services(answer.status, body)

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
            self._ask.set()
            return
        except aiohttp.ClientError as failed:
            _say(f"cannot reach the server: {failed}")
            writer.close()
            return
        await bridge(ws, reader, writer)
        self._ask.set()  # a stream the server ended may mean the tunnel closed


def _services(status: int, body: object) -> list[str]:
    """The services of the server's 400 for a missing service (its `services` field)."""
    offered = body.get("services") if isinstance(body, dict) else None
    if status == 400 and isinstance(offered, list) and all(isinstance(n, str) for n in offered):
        return offered
    message = body.get("message", "") if isinstance(body, dict) else ""
    raise Refused(f"unexpected answer from the server ({status}): {message}", 1)


def _say(text: str) -> None:
    print(f"edge tunnel connect: {text}", file=sys.stderr, flush=True)
