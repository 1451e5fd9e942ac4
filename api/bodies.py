"""Reading request bodies: JSON (checked against a schema) and forms.

Every JSON body goes through edge/kernel/json_text.py (size, depth, NaN/Infinity, lone
surrogates), and every body read here must arrive within `body_timeout` seconds, so a
client that sends headers and then trickles (or never sends) its body cannot hold a
handler: it gets a 408 and the connection is dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

from aiohttp import HttpVersion11, hdrs, web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

from api import schemas, shapes
from api.keys import SERVICES
from edge.kernel import json_text
from edge.kernel.errors import SchemaError, TimedOut, TooLarge, ValidationError

JSON_TYPES = ("application/json",)
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
CHUNK = 64 * 1024
T = TypeVar("T")


async def read_json(
    request: web.Request,
    schema: schemas.Schema,
    *,
    max_bytes: int | None = None,
    max_depth: int = json_text.MAX_DEPTH,
) -> dict[str, Any]:
    """The one JSON body reader. `max_bytes` and `max_depth` widen the limits for routes
    that carry larger documents (data values); every other rule stays."""
    if request.content_type not in JSON_TYPES and not request.content_type.endswith("+json"):
        raise ValidationError(None, "Content-Type must be application/json")
    limit = max_bytes or min(json_text.MAX_BYTES, request.app[SERVICES].config.max_body_bytes)
    raw = _arrived(request, limit)
    if raw is None:
        raw = await within_body_timeout(request, _read_capped(request, limit))
    body = json_text.parse(raw, max_bytes=limit, max_depth=max_depth) if raw else None
    if not isinstance(body, dict):
        raise SchemaError("body: must be a JSON object")
    if not shapes.fits(schema, body):
        schemas.validate(schema, body)
    return body


async def read_bytes(request: web.Request, limit: int) -> bytes:
    """A body that is not JSON (a certificate signing request), at most `limit` bytes."""
    raw = _arrived(request, limit)
    if raw is None:
        raw = await within_body_timeout(request, _read_capped(request, limit))
    return raw


def _arrived(request: web.Request, limit: int) -> bytes | None:
    """The whole body when it has already arrived (the usual small body comes in the same
    packets as the headers): nothing to wait for, so no timer to set. None otherwise."""
    if request.content_length is not None and request.content_length > limit:
        raise TooLarge(json_text.too_large(limit))
    content = request.content
    if not content.is_eof() or content.exception() is not None:
        return None
    raw = content.read_nowait()
    if len(raw) > limit:
        raise TooLarge(json_text.too_large(limit))
    return raw


async def _read_capped(request: web.Request, limit: int) -> bytes:
    """The body, refused as soon as it passes `limit` bytes (never held whole past it)."""
    if request.content_length is not None and request.content_length > limit:
        raise TooLarge(json_text.too_large(limit))
    data = bytearray()
    async for chunk in request.content.iter_chunked(CHUNK):
        data.extend(chunk)
        if len(data) > limit:
            raise TooLarge(json_text.too_large(limit))
    return bytes(data)


async def read_form(request: web.Request, schema: schemas.Schema) -> dict[str, str]:
    """A form's fields as strings; file parts are not accepted here."""
    if request.content_type not in FORM_TYPES:
        raise ValidationError(None, "Content-Type must be application/x-www-form-urlencoded")
    try:
        form = await within_body_timeout(request, request.post())
    except (ValueError, HttpProcessingError):  # no boundary, a broken part header, ...
        raise ValidationError("body", "is not a valid form") from None
    values: dict[str, str] = {}
    for key, value in form.items():
        if not isinstance(value, str):
            raise ValidationError(key, "must be a text field")
        json_text.check(key)  # a lone surrogate cannot be stored, encoded or logged
        json_text.check(value, field=key)
        values[key] = value
    if not shapes.fits(schema, values):
        schemas.validate(schema, values)
    return values


async def within_body_timeout(request: web.Request, reading: Awaitable[T]) -> T:
    """Await a read of the body, or TimedOut (408) after the configured body timeout; a
    body that cannot be read as sent (a `Content-Encoding: deflate` that is not deflate,
    broken chunked framing) is the client's fault, a 400, not a 500."""
    seconds = request.app[SERVICES].config.body_timeout
    try:
        async with asyncio.timeout(seconds):
            return await reading
    except TimeoutError:
        raise TimedOut(f"The request body did not arrive within {seconds} seconds") from None
    except RequestPayloadError:
        raise ValidationError(
            "body", "could not be read as sent (check its Content-Encoding)"
        ) from None


async def go_on(request: web.Request) -> None:
    """The `100 Continue` a client that sent `Expect: 100-continue` waits for before it sends
    its body: sent by a handler once it means to read it (routes with `continue_later`)."""
    expect = request.headers.get(hdrs.EXPECT, "")
    if request.version == HttpVersion11 and expect.lower() == "100-continue":
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0  # the answer proper is yet to come


class StallWatch:
    """A streamed body's guard (a presigned upload may take as long as its size needs): when
    its reader has waited `body_timeout` seconds for the next chunk (nginx's
    client_body_timeout), or a window of that length brought fewer than `body_min_rate`
    bytes a second while the reader waited for most of it, the stream fails with TimedOut
    (408). A per-read timeout alone lets one byte every 59 s hold an upload open for ever;
    a window in which the server was the slow one (the reader busy, not waiting) is never
    held against the client. One timer per body, moved on only when it fires: a timer
    armed for every chunk (asyncio.timeout) costs several times the reading of a chunk."""

    def __init__(self, request: web.Request) -> None:
        config = request.app[SERVICES].config
        self._content = request.content
        self._seconds = config.body_timeout
        self._min_rate = config.body_min_rate
        self._loop = asyncio.get_running_loop()
        self._since: float | None = None  # when the reader began to wait, while it waits
        self._window = _Window(self._loop.time())
        self._timer = self._loop.call_later(self._seconds, self._check)

    def waiting(self) -> None:
        self._since = self._loop.time()

    def arrived(self, size: int = 0) -> None:
        self._window.waited += self._waited_in_window(self._loop.time())
        self._since = None
        self._window.size += size

    def _waited_in_window(self, now: float) -> float:
        """How long the reader has been waiting, within the current window."""
        return 0.0 if self._since is None else now - max(self._since, self._window.start)

    def close(self) -> None:
        self._timer.cancel()

    def _check(self) -> None:
        now = self._loop.time()
        if self._since is not None and now - self._since >= self._seconds:
            message = f"The request body stopped arriving for {self._seconds} seconds"
            self._content.set_exception(TimedOut(message))  # the waiting read raises it
            return
        if self._trickles(now):
            message = f"The request body arrived at less than {self._min_rate} bytes a second"
            self._content.set_exception(TimedOut(message))
            return
        start = now if self._since is None else self._since
        self._timer = self._loop.call_at(start + self._seconds, self._check)

    def _trickles(self, now: float) -> bool:
        """Whether the window now ending brought too few bytes while the reader waited for
        most of it; a new window begins either way (once one is long enough to judge)."""
        window = self._window
        length = now - window.start
        if length < self._seconds:
            return False
        waited = window.waited + self._waited_in_window(now)
        self._window = _Window(now)
        return waited * 2 >= length and window.size < self._min_rate * length


@dataclass
class _Window:
    start: float
    size: int = 0  # bytes arrived in it
    waited: float = 0.0  # seconds the reader spent waiting for them
