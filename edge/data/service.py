"""The data service: what the HTTP handlers call (docs/data.md).

Reads are a point query inline (one entry) or a walk on a reader thread (a subtree);
writes go through the writer's group commit, durable when they return. Permissions are
decided per path by the caller's data grants (edge/data/target.py); the rights each write
needs are edge/access/paths.py `needed`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from edge.access.engine import Permissions
from edge.data import paths, uploads
from edge.data.bulk import Bulk
from edge.data.changes import DataChanged
from edge.data.pages import DataKeys
from edge.data.query import DataQuery
from edge.data.reads import Body, Reads
from edge.data.signing import DataSigner
from edge.data.target import DataTarget, Settings, Targets
from edge.data.versions import Version
from edge.data.writes import EntryWrites
from edge.kernel import clock
from edge.kernel.errors import Denied, NotFound
from edge.kernel.events import Hook
from edge.kernel.listing import CursorCodec
from edge.kernel.principal import Principal
from storage import data as store
from storage.database import Database

CASCADE_CHUNK = 2000


class Data:
    def __init__(
        self,
        db: Database,
        permissions: Permissions,
        settings: Settings,
        cursors: CursorCodec,
        signer: DataSigner,
        *,
        max_value_bytes: int,
        max_bulk_paths: int,
    ) -> None:
        self._db = db
        self.max_value_bytes = max_value_bytes
        self._targets = Targets(db, permissions, settings)
        self._reads = Reads(db, DataKeys(cursors), signer)
        self._writes = EntryWrites(signer, max_value_bytes)
        # Told after each write's commit (edge/data/changes.py); the live feed listens.
        self.changes: Hook[DataChanged] = Hook("data")
        self.bulk = Bulk(db, self._targets, self._reads, self._writes, max_bulk_paths, self.changes)

    async def get(self, principal: Principal, group_id: str, raw: str, query: DataQuery) -> Body:
        path = paths.normalize(raw)
        target = self._targets.open(principal, group_id, writing=False)
        if query.cascade:
            return await self._reads.many(target, path, query)
        found = self._reads.one(target, path, query)
        if found is None:
            raise NotFound(f"No data at {path}")
        return found

    async def put(
        self,
        principal: Principal,
        group_id: str,
        raw: str,
        body: dict[str, Any],
        expected: Version | None = None,
    ) -> None:
        """Store a value; `expected`: only over the entry at that version (If-Match)."""
        await self._write("put", principal, group_id, raw, body, expected)

    async def post(
        self, principal: Principal, group_id: str, raw: str, body: dict[str, Any]
    ) -> None:
        await self._write("post", principal, group_id, raw, body)

    async def patch(
        self,
        principal: Principal,
        group_id: str,
        raw: str,
        body: dict[str, Any],
        expected: Version | None = None,
    ) -> None:
        """Merge into an entry; `expected`: only while it is at that version (If-Match)."""
        await self._write("patch", principal, group_id, raw, body, expected)

    async def delete(
        self,
        principal: Principal,
        group_id: str,
        raw: str,
        *,
        cascade: bool,
        expected: Version | None = None,
    ) -> None:
        """Delete an entry (`expected`: only while it is at that version, If-Match) or,
        with `cascade`, a subtree."""
        path = paths.normalize(raw)
        target = self._targets.open(principal, group_id, writing=True)
        if not cascade:
            entry_path = paths.entry_path(raw)
            await self._db.write(lambda c: self._writes.delete(c, target, entry_path, expected))
            self._told(target, entry_path, "delete")
            return
        if not target.grants.whole_subtree(path, "delete"):
            target.refuse(f"Not permitted to delete data at {path} and below")
        while True:  # in chunks, so a huge subtree never holds the writer for long
            gone = await self._db.write(
                lambda c: store.delete_below(c, target.group_id, path, CASCADE_CHUNK)
            )
            if gone < CASCADE_CHUNK:
                self._told(target, path, "delete_below")
                return

    async def _write(
        self,
        how: str,
        principal: Principal,
        group_id: str,
        raw: str,
        body: dict[str, Any],
        expected: Version | None = None,
    ) -> None:
        path = paths.entry_path(raw)
        upload = uploads.upload(body, self.max_value_bytes, partial=how == "patch")
        target = self._targets.open(principal, group_id, writing=True)
        stamp = (principal.actor, clock.now_iso())
        writes = self._writes
        if how == "put":
            job = lambda c: writes.put_alone(c, target, path, upload, stamp, expected)  # noqa: E731
        else:
            operation = partial(writes.patch, expected=expected) if how == "patch" else writes.post
            job = lambda c: operation(c, writes.current(c, target), path, upload, stamp)  # noqa: E731
        # Each of these reads, then changes the entry by one statement: no savepoint.
        await self._db.write(job, savepoint=False)
        self._told(target, path, how)  # "put", "post" or "patch", as the change names it

    def may_read(self, principal: Principal, group_id: str, path: str) -> bool:
        """Whether the caller may read the entry at `path` now (its grants as of the
        access epoch): what the live feed asks before it tells a change."""
        return self.reader(principal, group_id)(path)

    def reader(self, principal: Principal, group_id: str) -> Callable[[str], bool]:
        """Whether the caller may read a path of the group, its group access decided once
        here: what the live feed asks for a batch of changes of one group."""
        try:
            target = self._targets.open(principal, group_id, writing=False)
        except (NotFound, Denied):
            return lambda path: False
        if target.everywhere is not None:
            everywhere = target.everywhere.has("read")
            return lambda path: everywhere
        grants = target.grants
        return lambda path: grants.at(path).has("read")

    def _told(self, target: DataTarget, path: str, how: str) -> None:
        self.changes.emit(DataChanged(target.group.org_id, target.group_id, path, how))
