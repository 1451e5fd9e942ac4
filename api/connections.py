"""Slow and greedy clients: a time limit on request headers and a cap on the connections
one address may hold, so that a few hundred idle half-requests cannot use up the file
descriptors and stop the server from accepting anyone.

aiohttp has no public header-read timeout, so its per-connection protocol
(`aiohttp.web_protocol.RequestHandler`) is subclassed here, and the listening socket is
served with a factory that makes these protocols instead (`GuardedSite`):

- `header_timeout`: from the moment a connection opens, and again from the first byte of
  each later request on a kept-alive connection, the request's headers must be complete
  within this many seconds; else the client gets a 408 (or nothing, if it sent nothing)
  and the connection is closed. Idle kept-alive connections are closed by aiohttp after
  `keepalive_timeout`; a request body must arrive within `body_timeout` once read
  (api/bodies.py), and a body nobody reads is drained for at most aiohttp's 10 s.
- `max_connections_per_address`: one more connection from an address that already holds
  this many is answered 503 and closed at once.
- A request aiohttp cannot read before any handler runs (a malformed request line or
  header, Content-Length beside chunked, an unknown Content-Encoding) is answered in the
  Status payload, as every other error, with one INFO line: aiohttp's own answer is plain
  text, and it logged a traceback at ERROR for each, so any client could fill the log.

What the subclass reads of aiohttp's internals (`_messages`, `_waiter`, and the protocol
arguments the server keeps in `_kwargs`) is pinned with aiohttp's version in
pyproject.toml; tests/api/test_slow_clients.py fails if they change.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import ssl
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import hdrs, web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from api.middleware import SERVER_NAME

log = logging.getLogger("edge.http")


@dataclass
class Limits:
    header_timeout: float
    max_per_address: int
    open: Counter[str] = field(default_factory=Counter)  # connections held, by address


def _response(status: str, message: str) -> bytes:
    body = json.dumps({"message": message}).encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


TOO_MANY = _response("503 Service Unavailable", "Too many connections from this address")
TOO_SLOW = _response("408 Request Timeout", "The request headers did not arrive in time")


class GuardedProtocol(RequestHandler):
    """aiohttp's protocol, plus the header deadline and the per-address count."""

    def __init__(self, manager: web.Server, limits: Limits, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._limits = limits
        self._address: str | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._refused = False
        self._started_request = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "-"
        if self._limits.open[address] >= self._limits.max_per_address:
            self._refused = True
            held = self._limits.open[address]
            log.warning("refused a connection from %s: %d already open", address, held)
            _close_with(transport, TOO_MANY)
            return
        self._limits.open[address] += 1
        self._address = address
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._refused:
            return
        self._disarm()
        if self._address is not None:
            self._limits.open[self._address] -= 1
            if self._limits.open[self._address] <= 0:
                del self._limits.open[self._address]
            self._address = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._messages:  # a request's headers are complete: it is the handler's now
            self._disarm()
        elif data and (self._deadline is not None or self._waiter is not None):
            # bytes of a request whose headers are not complete yet: the clock runs
            self._started_request = True
            if self._deadline is None:
                self._arm()

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """A client's request aiohttp could not read: the Status payload, closed after."""
        if status >= 500 or request.writer.output_size > 0:
            answer = super().handle_error(request, status, exc, message)
            answer.headers[hdrs.SERVER] = SERVER_NAME
            return answer
        said = message or (str(exc) if exc is not None else "") or "malformed request"
        reason = said[:200].encode("ascii", "backslashreplace").decode()  # it may echo bytes
        log.info("refused a request from %s that could not be read: %r", self._address, reason)
        body = {"message": f"The request could not be read: {reason}"}
        response = web.json_response(body, status=status, headers={hdrs.SERVER: SERVER_NAME})
        response.force_close()
        return response

    def _arm(self) -> None:
        loop = asyncio.get_running_loop()
        self._deadline = loop.call_later(self._limits.header_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._started_request = False

    def _too_slow(self) -> None:
        self._deadline = None
        if self._messages or self.transport is None:
            return
        log.info(
            "closed a connection from %s: no complete request headers within %g s",
            self._address,
            self._limits.header_timeout,
        )
        if self._started_request:
            self.transport.write(TOO_SLOW)
        self.force_close()


def _close_with(transport: asyncio.BaseTransport, reply: bytes) -> None:
    if isinstance(transport, asyncio.WriteTransport):
        transport.write(reply)
    transport.close()


class GuardedSite(web.SockSite):
    """Serve a socket that is already bound (edge binds before it creates anything) with
    guarded protocols."""

    def __init__(
        self,
        runner: web.BaseRunner,
        sock: socket.socket,
        limits: Limits,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(runner, sock, ssl_context=ssl_context)
        self._limits = limits

    async def start(self) -> None:
        self._runner._reg_site(self)
        server = self._runner.server
        assert server is not None
        limits = self._limits

        def protocol() -> GuardedProtocol:
            kwargs = {**server._kwargs, "loop": asyncio.get_running_loop()}
            return GuardedProtocol(server, limits, **kwargs)

        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            protocol,
            sock=self._sock,
            ssl=self._ssl_context,
            backlog=self._backlog,
            # the TLS handshake comes before any header: it gets the same time
            ssl_handshake_timeout=limits.header_timeout if self._ssl_context else None,
        )
