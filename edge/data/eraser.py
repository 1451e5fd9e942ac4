"""Erasing the data of groups that are gone for good: erased permanently, purged or
erased from the trash, or deleted with their organization (triggers of
storage/migrations/0011_data.sql queue them). Small batches, each its own write, so
erasing a million entries never holds the writer for long; other writes go in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from storage import data as store
from storage.database import Database

BATCH = 2000
IDLE_SECONDS = 5.0
log = logging.getLogger("edge.data")


class DataEraser:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def erase_pending(self) -> int:
        """Erase everything queued; returns how many entries went."""
        total = 0
        while groups := self._db.read(store.groups_to_erase):
            for group_id in groups:
                total += await self._db.write(
                    lambda c, g=group_id: store.erase_some(c, g, BATCH)  # type: ignore[misc]
                )
        return total

    async def run(self, stop: asyncio.Event) -> None:
        """Until asked to stop: erase what is queued, then look again every few seconds."""
        while not stop.is_set():
            try:
                await self.erase_pending()
            except Exception:  # logged; the next round tries again
                log.exception("erasing the data of deleted groups failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), IDLE_SECONDS)
