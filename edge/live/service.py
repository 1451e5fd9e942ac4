"""The live changes service: what `GET /v2/events` calls (docs/events.md).

Opening a stream checks what can be checked once: the caller acts in an organization, a
group it names is one it may see, a device it names one it may read (else 404, as their
own GETs answer), and its account holds fewer than the most open streams (else 429).
Every change is checked again as it is sent (`may_read`), so rights that change while the
stream is open count from the next change; whether the credentials still hold (a session
revoked, an account suspended) the HTTP layer asks again at least every `RECHECK` seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from edge.kernel.errors import Denied, NotFound
from edge.kernel.principal import Principal
from edge.live import mqtt
from edge.live.feed import Change, Feed
from edge.live.readable import Readable
from edge.live.selection import Selection
from edge.live.streams import Stream, Streams
from storage import live_runs
from storage.database import Database

RECHECK = 0.5  # seconds between two checks of an open stream's credentials and connection
GroupCheck = Callable[[Principal, str], object]  # raises NotFound when the group is not seen


@dataclass(frozen=True)
class Opened:
    """A stream just opened: the changes it missed since its Last-Event-ID, or `reload`
    when the window no longer holds them or they are more than a stream may hold
    (`events_stream_buffer`)."""

    stream: Stream
    missed: list[Change]
    reload: bool


class Live:
    def __init__(
        self,
        db: Database,
        feed: Feed,
        streams: Streams,
        readable: Readable,
        sees_group: GroupCheck,
    ) -> None:
        self._db = db
        self.feed = feed
        self.streams = streams
        self.readable = readable
        self._sees_group = sees_group

    async def begin(self) -> None:
        """Move the durable run counter on, before anything is told: this run's IDs begin
        above every ID of the runs before it."""
        self.feed.begin(await self._db.write(live_runs.next_run))

    def open(self, principal: Principal, selection: Selection, last_event_id: str | None) -> Opened:
        self.check(principal, selection)
        org_id = principal.org_id or ""
        missed = [] if last_event_id is None else self._since(org_id, last_event_id)
        stream = self.streams.open(principal, selection)
        if missed is None:
            return Opened(stream, [], True)
        missed = [c for c in missed if selection.matches(c)]
        if len(missed) > self.streams.capacity:  # more than a stream may hold: read again
            return Opened(stream, [], True)
        return Opened(stream, missed, False)

    def publish_over_mqtt(self, publish: mqtt.Publish) -> None:
        """Data changes go to the broker too (the composition root hands in its publish)."""
        mqtt.connect(self.feed, self.readable, publish)

    def readable_of(self, stream: Stream, changes: list[Change]) -> list[Change]:
        """The changes of one batch the stream's caller may read now (readable.py)."""
        return self.readable.readable_of(stream.principal, changes, stream.selection.prefix)

    def close(self, stream: Stream) -> None:
        self.streams.close(stream)

    def check(self, principal: Principal, selection: Selection) -> None:
        """What opening a stream checks once (a HEAD asks no more, and no less: the
        account's open streams count too)."""
        if principal.org_id is None:
            raise Denied("Sign in to an organization first (staff: with a scope)")
        self.streams.check_room(principal)
        if selection.group_id is not None:
            self._sees_group(principal, selection.group_id)
        device_id = selection.device_id
        if device_id is not None and not self.readable.device(principal, device_id):
            raise NotFound("Device not found")

    def _since(self, org_id: str, last_event_id: str) -> list[Change] | None:
        text = last_event_id.strip()
        if not text.isascii() or not text.isdigit() or len(text) > 18:
            return None  # not an ID of this feed: the client reloads
        return self.feed.since(org_id, int(text))
