"""`last_seen` without a database write per request or per MQTT message.

Activity only adds a device ID to an in-memory set (a few hundred nanoseconds); a
background task writes the whole set in one statement every `FLUSH_SECONDS`, and once
more on shutdown. A device's `last_seen` is therefore the time of the flush that followed
its activity: exact to within those few seconds, which is what the field is for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from edge.kernel import clock
from storage import devices as store
from storage.database import Database

FLUSH_SECONDS = 5.0
log = logging.getLogger("edge.devices")


class LastSeen:
    def __init__(self, db: Database, interval: float = FLUSH_SECONDS) -> None:
        self._db = db
        self._interval = interval
        self._pending: set[str] = set()

    def seen(self, account_id: str) -> None:
        self._pending.add(account_id)

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def flush(self) -> int:
        """Write what was seen since the last flush (one statement); how many IDs."""
        if not self._pending:
            return 0
        batch, self._pending = self._pending, set()
        now = clock.now_iso()
        await self._db.write(lambda c: store.mark_seen(c, batch, now))
        return len(batch)

    async def run(self, stop: asyncio.Event) -> None:
        """Flush every interval until asked to stop, then once more."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self._interval)
            try:
                await self.flush()
            except Exception:  # best effort: a lost batch only makes last_seen older
                log.exception("could not record last_seen")
