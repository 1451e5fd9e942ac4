"""The limits of the relay: a shared byte rate per tunnel, and the configured bounds."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """`bytes_per_second` 0: no rate limit. `connect_seconds`: how long a new stream waits
    for the device's end. `idle_seconds`: a stream with no bytes either way is closed.
    `max_open`: tunnels open to one device at once (edge/tunnels/tunnels.py, `open`), and
    so the most a device view carries (edge/tunnels/views.py)."""

    bytes_per_second: int = 0
    max_streams: int = 16
    max_open: int = 4
    idle_seconds: float = 900.0
    connect_seconds: float = 15.0


class Bucket:
    """A token bucket shared by every stream of one tunnel, holding at most one second's
    worth. A chunk larger than what is left is let through and the debt is waited off, so
    the average rate holds and a chunk is never split; the waiting pump does not read its
    next chunk, so the sender is pushed back on (TCP and WebSocket flow control), never
    buffered."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self._level = float(rate)
        self._stamp = 0.0

    async def take(self, size: int) -> None:
        if self.rate <= 0:
            return
        now = asyncio.get_running_loop().time()
        if self._stamp:
            self._level = min(float(self.rate), self._level + (now - self._stamp) * self.rate)
        self._stamp = now
        self._level -= size
        if self._level < 0:
            await asyncio.sleep(-self._level / self.rate)
