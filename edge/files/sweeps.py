"""Keeping the disk and the index in step (docs/files.md, "Crash safety and sweeps").

- `collect`, after every delete or overwrite: unlink the blobs whose rows are gone.
- `recover`, once at start, before serving (nothing is in flight then): remove temporary
  files a crash left, blobs no row names (a crash between the rename and the commit),
  part folders of uploads that no longer exist; then collect.
- `sweep`, in the background: forget upload sessions expired for more than `GRACE` (their
  parts with them) and collect. A part still streaming when its session expired fails
  cleanly; the grace keeps the sweep from pulling a folder from under a transfer that began
  just before the expiry.
While a backup holds the blobs, unlinking waits for the next round.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import timedelta

from edge.kernel import clock
from storage import file_uploads, files
from storage.blobs import BlobStore
from storage.database import Database
from storage.rows import Tx

GRACE = timedelta(hours=1)
INTERVAL_SECONDS = 600
log = logging.getLogger("edge.files")


class Sweeps:
    def __init__(self, db: Database, store: BlobStore) -> None:
        self._db = db
        self._store = store

    async def collect(self) -> None:
        """Unlink blobs whose rows are gone (unless a backup holds the blobs)."""
        while names := self._db.read(lambda c: files.gone(c)):
            if not await self._store.run(self._store.unlink, names):
                return
            await self._db.write(lambda c: files.forget_gone(c, names))

    async def recover(self) -> None:
        temporary = await self._store.run(self._store.clear_temporary)
        orphans = await self._orphans()
        folders = await self._abandoned_folders()
        await self.collect()
        if temporary or orphans or folders:
            log.warning(
                "recovered after an interruption: %s temporary files, %s unindexed blobs,"
                " %s abandoned part folders removed",
                temporary,
                orphans,
                folders,
            )

    async def sweep(self) -> None:
        before = clock.iso(clock.now() - GRACE)
        while ids := self._db.read(lambda c: file_uploads.expired(c, before)):
            await self._db.write(lambda c: file_uploads.delete_many(c, ids))
            for upload_id in ids:
                await self._store.run(self._store.remove_upload, upload_id)
        await self.collect()

    async def run(self, stop: asyncio.Event) -> None:
        """Sweep every `INTERVAL_SECONDS` until asked to stop."""
        while not stop.is_set():
            try:
                await self.sweep()
            except Exception:  # a sweep must never end the loop; the next one retries
                log.exception("files sweep failed")
            try:
                await asyncio.wait_for(stop.wait(), INTERVAL_SECONDS)
            except TimeoutError:
                pass

    async def _orphans(self) -> int:
        removed = 0
        for names in await self._store.run(lambda: list(self._store.names_on_disk())):
            known = await self._db.scan(_known_in(names))
            orphans = [n for n in names if n not in known]
            if not orphans:
                continue
            if await self._store.run(self._store.unlink, orphans):
                removed += len(orphans)
        return removed

    async def _abandoned_folders(self) -> int:
        folders = await self._store.run(self._store.upload_folders)
        live = await self._db.scan(lambda c: file_uploads.existing(c, folders))
        gone = [f for f in folders if f not in live]
        for folder in gone:
            await self._store.run(self._store.remove_upload, folder)
        return len(gone)


def _known_in(names: list[str]) -> Callable[[Tx], set[str]]:
    return lambda conn: files.known(conn, names)
