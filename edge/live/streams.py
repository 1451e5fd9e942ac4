"""Open streams: each a bounded queue of the changes its selection matches, and at most
`events_max_streams` of them per account.

The feed tells every change to every open stream in line (`offer`: a comparison, an
append); the stream's own task sends them and asks `readable.py` first. A reader that
falls `capacity` changes behind is cut off: its queue is dropped at once and its task
ends the stream, so a slow reader costs at most `capacity` changes of memory, never the
server's. The client resumes with Last-Event-ID.
"""

from __future__ import annotations

import asyncio
from collections import deque

from edge.kernel.errors import TooManyAttempts
from edge.kernel.principal import Principal
from edge.live.feed import Change, Feed
from edge.live.selection import Selection

RETRY_AFTER = 5  # seconds a refused client is asked to wait (a stream may be closing)


class TooManyStreams(TooManyAttempts):
    """The account already holds its most open streams."""


class Stream:
    def __init__(self, principal: Principal, selection: Selection, capacity: int) -> None:
        self.principal = principal
        self.selection = selection
        self._capacity = capacity
        self._queue: deque[Change] = deque()
        self._ready = asyncio.Event()
        self.cut = False  # fell `capacity` behind: the stream ends
        self.ended = False  # the server is stopping: the stream ends

    def offer(self, change: Change) -> None:
        if self.cut or not self.selection.matches(change):
            return
        if len(self._queue) >= self._capacity:
            self.cut = True
            self._queue.clear()
        else:
            self._queue.append(change)
        self._ready.set()

    def end(self) -> None:
        self.ended = True
        self._ready.set()

    async def next_batch(self, timeout: float) -> list[Change]:
        """The changes queued since the last batch; waits at most `timeout` seconds for
        one (an empty batch then: the caller checks its credentials and its connection)."""
        if not self._queue and not self.cut and not self.ended:
            self._ready.clear()
            try:
                await asyncio.wait_for(self._ready.wait(), timeout)
            except TimeoutError:
                return []
        batch = list(self._queue)
        self._queue.clear()
        return batch


class Streams:
    def __init__(self, feed: Feed, max_per_account: int, capacity: int) -> None:
        self._max = max_per_account
        self._capacity = capacity
        self._open: dict[str, set[Stream]] = {}
        feed.told.listen(self._fan_out)

    def open(self, principal: Principal, selection: Selection) -> Stream:
        self.check_room(principal)
        stream = Stream(principal, selection, self._capacity)
        self._open.setdefault(principal.account_id, set()).add(stream)
        return stream

    def check_room(self, principal: Principal) -> None:
        """Raises TooManyStreams when the account already holds its most open streams."""
        if len(self._open.get(principal.account_id, ())) >= self._max:
            raise TooManyStreams(
                f"At most {self._max} event streams may be open at once; close one first",
                RETRY_AFTER,
            )

    def close(self, stream: Stream) -> None:
        held = self._open.get(stream.principal.account_id)
        if held is not None:
            held.discard(stream)
            if not held:
                del self._open[stream.principal.account_id]

    def end_all(self) -> None:
        """Every open stream ends (the server is stopping); clients resume elsewhere or
        later with Last-Event-ID."""
        for held in self._open.values():
            for stream in held:
                stream.end()

    @property
    def capacity(self) -> int:
        """Changes one stream may hold unsent: a resume that missed more reloads."""
        return self._capacity

    def count(self) -> int:
        return sum(len(held) for held in self._open.values())

    def _fan_out(self, change: Change) -> None:
        for held in self._open.values():
            for stream in held:
                stream.offer(change)
