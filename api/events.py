"""Live changes as Server-Sent Events (docs/events.md), an extension of the interface.

- GET /v2/events   any signed-in caller (a token or a device's API key, in the header);
                   each change is sent only if the caller may read it when it is sent

The query chooses what the stream carries: `kinds` (comma-separated, of `data`, `files`,
`presence`, `twins`, `jobs`; default all), `group_id` (data and files of one group), `path` (a
data or file path prefix; default `/`), `device_id` (presence and twins of one device). A
token never travels in the query: the only credentials are the `Authorization` (or
`X-API-Key`) header's, and a query parameter named like a token is refused (400), so
tokens never reach access logs as part of a URL.

`Last-Event-ID` resumes after that event within the window; past it, the first event is
`reload`. The stream ends with an `end` event when the caller's credentials stop holding,
and without one when it falls `events_stream_buffer` events behind (the client resumes).
"""

from __future__ import annotations

import asyncio
import contextlib

import orjson
from aiohttp import web
from aiohttp_sse import EventSourceResponse, sse_response

from api import params
from api.keys import SERVICES
from api.routing import Route, principal, still_signed_in
from edge.data import paths
from edge.kernel.errors import ValidationError
from edge.live.feed import KINDS, Change
from edge.live.selection import Selection
from edge.live.service import RECHECK, Live, Opened
from edge.live.streams import Stream

QUERY = ("kinds", "group_id", "path", "device_id")
TOKEN_NAMES = frozenset({"token", "access_token", "api_key", "authorization", "key"})
PING_SECONDS = 15.0  # a comment line this often keeps proxies from closing an idle stream
CHUNK = 100  # frames to one write: a long batch yields the loop between its writes
SEND_SECONDS = 10.0  # a write the reader has not taken in this long drops the connection
ENDED = "Your session has ended or your access changed; sign in again"
RELOAD = "Changes were missed (the window passed, or the server restarted): read again"


class BatchedEvents(EventSourceResponse):
    """aiohttp-sse's response, whose `send` frames each event, with one change: the frames
    of a batch reach the socket in one write (`send_all`), not one write (and one system
    call) each, the most of what a busy stream cost (bench/events.py). The joined write is
    the last frame's own, so aiohttp-sse's send timeout (a stalled reader) still holds."""

    _held: list[bytes] | None = None  # frames framed but not yet written
    _last = False  # the frame being sent is the batch's last: write them all

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if held is not None:
            held.append(bytes(data))
            if not self._last:
                return
            self._held, data = None, b"".join(held)
        await super().write(data)

    async def send_all(self, frames: list[tuple[str, int | None, str]]) -> None:
        """Each (event, ID, data) framed by `send`, then all written at once."""
        self._held = []
        try:
            for n, (event, event_id, data) in enumerate(frames, 1):
                self._last = n == len(frames)
                await self.send(data, id=None if event_id is None else str(event_id), event=event)
        finally:
            self._held, self._last = None, False


def _live(request: web.Request) -> Live:
    return request.app[SERVICES].live


def _selection(request: web.Request, org_id: str) -> Selection:
    for name in request.query:
        if name.lower() in TOKEN_NAMES:
            raise ValidationError(name, "tokens travel in the Authorization header, never the URL")
    query = params.only(request.query, QUERY)
    return Selection(
        org_id,
        _kinds(query.get("kinds")),
        query.get("group_id") or None,
        paths.normalize(query.get("path", "/")),
        query.get("device_id") or None,
    )


def _kinds(raw: str | None) -> frozenset[str]:
    if raw is None:
        return frozenset(KINDS)
    chosen = frozenset(kind.strip() for kind in raw.split(",") if kind.strip())
    unknown = chosen - set(KINDS)
    if unknown or not chosen:
        raise ValidationError("kinds", f"must name some of {', '.join(KINDS)}")
    return chosen


async def stream_events(request: web.Request) -> web.StreamResponse:
    who = principal(request)
    selection = _selection(request, who.org_id or "")
    live = _live(request)
    if request.method == "HEAD":  # what a GET would answer, without a stream to hold
        live.check(who, selection)
        return web.Response(content_type="text/event-stream", headers={"Cache-Control": "no-cache"})
    opened = live.open(who, selection, request.headers.get("Last-Event-ID"))
    try:
        async with sse_response(
            request,
            ping_interval=PING_SECONDS,
            send_timeout=SEND_SECONDS,
            response_cls=BatchedEvents,
        ) as sse:
            with contextlib.suppress(ConnectionResetError, TimeoutError):
                await _run(request, sse, live, opened)
        return sse
    finally:
        live.close(opened.stream)


async def _run(request: web.Request, sse: BatchedEvents, live: Live, opened: Opened) -> None:
    """Send what was missed (or `reload`), then each change as it comes, until the caller
    goes, its credentials stop holding, it falls behind, or the server stops."""
    stream = opened.stream
    if opened.reload:
        last = live.feed.last_id(stream.selection.org_id)  # its organization's own count
        await _send(sse, "reload", last, {"message": RELOAD})
    await _tell(sse, live, opened.missed, stream)
    loop = asyncio.get_running_loop()
    checked = loop.time()
    while _connected(request):
        batch = await stream.next_batch(RECHECK)
        if stream.cut:
            return
        if loop.time() - checked >= RECHECK:  # at most this often, however busy the feed
            checked = loop.time()
            if not still_signed_in(request):
                await _send(sse, "end", None, {"message": ENDED})  # no ID: resume where it was
                return
        await _tell(sse, live, batch, stream)
        if stream.ended:  # the server is stopping: what was queued went out
            return


async def _tell(sse: BatchedEvents, live: Live, changes: list[Change], stream: Stream) -> None:
    """The changes the caller may read, at most `CHUNK` to a write, the loop free for
    others between two writes (a resume may send `events_stream_buffer` at once)."""
    readable = live.readable_of(stream, changes)
    for start in range(0, len(readable), CHUNK):
        if start:
            await asyncio.sleep(0)
        chunk = readable[start : start + CHUNK]
        await sse.send_all([(c.kind, c.id, orjson.dumps(c.body).decode()) for c in chunk])


async def _send(sse: BatchedEvents, event: str, event_id: int | None, body: object) -> None:
    await sse.send_all([(event, event_id, orjson.dumps(body).decode())])


def _connected(request: web.Request) -> bool:
    transport = request.transport
    return transport is not None and not transport.is_closing()


ROUTES = [
    Route(
        "GET",
        "/v2/events",
        stream_events,
        "token",
        "Live changes the caller may read, as Server-Sent Events: data entries and files"
        " under a group and path prefix, device presence, twin changes, job progress;"
        " Last-Event-ID resumes",
        "events",
        query=QUERY,
        query_types={
            "kinds": {
                "type": "string",
                "description": "Comma-separated kinds of change: data, files, presence, twins, jobs"
                " (default: all)",
            },
            "group_id": {"type": "string", "description": "Data and files of this group only"},
            "path": {
                "type": "string",
                "description": "Data and file changes at or below this path (default /)",
            },
            "device_id": {
                "type": "string",
                "description": "Presence and twin changes of this device only",
            },
        },
        responses={200: "A stream of events (text/event-stream)"},
        response_type="text/event-stream",
        errors=(404, 429),
        headers={
            "Last-Event-ID": "Resume after this event: the changes missed since, or a first"
            " `reload` event when the window (or the stream's buffer) no longer holds them",
        },
        extension=True,
    ),
]
