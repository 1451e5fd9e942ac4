"""The middleware chain, in order, each with its reason.

What the outer layer takes from the configuration (the response headers, whether to log
access) is resolved once, at the application's first request, and reused after.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

from aiohttp import hdrs, web
from aiohttp.typedefs import Middleware
from multidict import istr

from api import errors, metrics
from api.client_address import client_address
from api.errors import ErrorHook, Handler
from api.keys import PRINCIPAL, REQUEST_ID, SERVICES
from edge.kernel import logs, origin
from edge.kernel.config import Config
from edge.kernel.errors import ValidationError
from edge.ops.metrics import UNMATCHED, RequestStats
from edge.pulse.counters import Counters

_CLIENT_REQUEST_ID = re.compile(r"[A-Za-z0-9._\-]{1,64}")
X_REQUEST_ID = istr("X-Request-ID")
SERVER_NAME = "edge"
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


@dataclass(frozen=True)
class Framing:
    """What the outer layer adds to every answer, decided from the configuration."""

    headers: tuple[tuple[istr, str], ...]
    access_log: bool
    requests: RequestStats | None  # None when metrics are off
    pulse: Counters  # the site's pulse (docs/pulse.md): one addition per answer

    @classmethod
    def of(cls, app: web.Application) -> Framing:
        services = app[SERVICES]
        items = tuple((istr(k), v) for k, v in headers(services.config).items())
        counters = services.pulse_sampler.counters
        return cls(items, services.config.access_log, app.get(metrics.REQUESTS), counters)


FRAMING = web.RequestKey("framing", Framing)


def headers(config: Config) -> dict[str, str]:
    """The security headers; Strict-Transport-Security only when edge itself serves HTTPS."""
    chosen = dict(SECURITY_HEADERS)
    if config.tls and config.hsts_max_age:
        chosen["Strict-Transport-Security"] = f"max-age={config.hsts_max_age}"
    return chosen


def loggable_path(raw_path: str) -> str:
    """The path as sent, without the query string (presigned URLs carry signatures there,
    and some clients put tokens there); anything that could break a log line escaped."""
    path = raw_path.partition("?")[0]
    return path if path.isprintable() else path.encode("unicode_escape").decode("ascii")


def framing() -> Middleware:
    resolved: list[Framing] = []  # this application's, filled at its first request

    @web.middleware
    async def request_id(request: web.Request, handler: Handler) -> web.StreamResponse:
        """First: every log line and every error body can name the request."""
        if not resolved:
            resolved.append(Framing.of(request.app))
        given = request.headers.get(X_REQUEST_ID)
        rid = given if given and _CLIENT_REQUEST_ID.fullmatch(given) else os.urandom(16).hex()
        request[REQUEST_ID] = rid
        logs.current_request.set(rid)
        origin.set_origin(
            lambda: origin.Origin(client_address(request), rid, request.get(PRINCIPAL))
        )
        answer = request[FRAMING] = resolved[0]  # the headers: `frame`, as it is prepared
        started = time.perf_counter()
        response = await handler(request)
        answer.pulse.request(request.get(PRINCIPAL))
        if answer.requests is not None or answer.access_log:
            took = time.perf_counter() - started
            status = response.status
            if answer.requests is not None:
                _count(answer.requests, request, status, took)
            if answer.access_log:
                _access(request, status, took, rid)
        return response

    return request_id


def _count(requests: RequestStats, request: web.Request, status: int, seconds: float) -> None:
    """By the route's declared template (`/v2/groups/{group_id}`), never the raw path."""
    resource = request.match_info.route.resource
    route = resource.canonical if resource is not None else UNMATCHED
    requests.observe(request.method, route, status, seconds)


def _access(request: web.Request, status: int, seconds: float, rid: str) -> None:
    who = request.get(PRINCIPAL)
    logs.access(
        request.method,
        loggable_path(request.raw_path),
        status,
        seconds * 1000,
        rid,
        client_address(request),
        who.account_id if who is not None else None,
    )


async def frame(request: web.Request, response: web.StreamResponse) -> None:
    """The one place an answer's headers are set: `Server: edge` (never aiohttp's
    `Python/3.11 aiohttp/3.x`, which tells a scanner which versions to try), the request's
    ID and the security headers. A response-prepare hook, not a layer of the chain: it
    reaches answers prepared inside a handler too (downloads, a WebSocket's 101). (Answers
    to requests aiohttp cannot read never reach the application: api/connections.py names
    the server on those.)"""
    framed = response.headers
    framed[hdrs.SERVER] = SERVER_NAME
    answer = request.get(FRAMING)
    if answer is None:  # never reached the chain
        return
    framed[X_REQUEST_ID] = request[REQUEST_ID]
    for name, value in answer.headers:
        framed.setdefault(name, value)


@web.middleware
async def utf8_escapes(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A URL's percent-escapes must spell UTF-8. One that does not (`%FF`) is kept by the
    URL parser as its three characters, so `/files/a%FF` and `/files/a%25FF` (the escape of
    a literal `%FF`) named the same file: two spellings, one name. It is a 400 instead; a
    literal `%` is written `%25`."""
    raw = request.rel_url.raw_path
    if "%" in raw:
        try:
            unquote_to_bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError(
                "path", "holds a percent-escape that is not UTF-8 (write a literal % as %25)"
            ) from None
    return await handler(request)


def chain(on_server_error: ErrorHook | None = None) -> list[Middleware]:
    return [
        framing(),  # outermost: the ID exists before anything can fail; every answer framed
        errors.middleware(on_server_error),  # every failure below becomes a Status payload
        utf8_escapes,  # before routing's handlers read a path: one spelling per name
    ]
