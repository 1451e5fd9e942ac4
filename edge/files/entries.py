"""The files of a group: reading one or a subtree (with presigned download URLs), changing
index fields, deleting, and serving a presigned download.

A subtree is listed in path order through the list engine, filtered inside its query by
what the caller may read (the longest grant path decides, edge/files/rights.py). With a
`path_filter`, at most `SCAN_CAP` files are examined per page, as for data: the page ends
early with a continuation key when the cap is reached before `limit` matches.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, BinaryIO

from edge.files import shapes, values
from edge.files.changes import FileChanged
from edge.files.rights import FileRights, GroupFiles
from edge.files.signing import Grant, UrlSigner
from edge.files.sweeps import Sweeps
from edge.kernel import clock
from edge.kernel.errors import Denied, NotFound, ValidationError
from edge.kernel.events import Hook
from edge.kernel.listing import Filter, ListQuery, Page, fetch
from edge.kernel.principal import Principal
from storage import files as store
from storage.blobs import BlobStore
from storage.database import Database
from storage.listing import Scope
from storage.records import FileEntry
from storage.rows import Tx

TABLE = store.LIST
SCAN_CAP = 10_000  # MAX_PATH_FILTER_SCAN_ITEMS of the interface
ORDER = "path"
OPEN_ATTEMPTS = 3


@dataclass(frozen=True)
class ReadOptions:
    cascade: bool = False
    paths_only: bool = False
    path_filter: str | None = None
    redirect: bool = False
    url_only: bool = False
    info_only: bool = False
    expires_in: int = values.DEFAULT_EXPIRES_IN


@dataclass(frozen=True)
class Redirect:
    url: str


@dataclass
class Listed:
    """A subtree page: `key` names the list the page's rows make (files, paths or urls)."""

    key: str
    page: Page


@dataclass
class Download:
    """A file's bytes, open: its blobs in order with their sizes (one, or one per part)."""

    blobs: list[tuple[BinaryIO, int]]
    size: int
    etag: str
    content_type: str
    modified: datetime

    def close(self) -> None:
        for handle, _ in self.blobs:
            handle.close()


class Files:
    def __init__(
        self,
        db: Database,
        rights: FileRights,
        store: BlobStore,
        signer: UrlSigner,
        sweeps: Sweeps,
        changes: Hook[FileChanged],
    ) -> None:
        self._db = db
        self._rights = rights
        self.changes = changes  # told after each commit (edge/files/changes.py)
        self._store = store
        self._signer = signer
        self._sweeps = sweeps

    async def read(
        self,
        principal: Principal,
        group_id: str,
        raw_path: str,
        query: ListQuery,
        options: ReadOptions,
        base: str,
    ) -> dict[str, Any] | Redirect | Listed:
        path = values.file_path(raw_path)
        where = self._rights.open(principal, group_id)
        if options.cascade:
            if options.redirect:
                raise ValidationError("redirect", "applies to one file; ask without cascade")
            return await self._subtree(where, path, query, options, base)
        where.require(path, "read")
        entry = self._db.read(lambda c: store.get(c, where.group.id, path))
        if entry is None:
            raise NotFound("File not found")
        url = self._download_url(base, entry, options.expires_in)
        return _one(entry, url, options)

    async def patch(
        self, principal: Principal, group_id: str, raw_path: str, body: dict[str, Any]
    ) -> None:
        path = values.file_path(raw_path)
        for name in values.SERVER_OWNED:
            if name in body:
                raise ValidationError(name, "is set by the server from the uploaded bytes")
        where = self._rights.open(principal, group_id)
        where.require(path, *where.to_patch())
        fields = values.index_fields(body)
        now, actor, keep = clock.now_iso(), principal.actor, where.group.num_history

        def write(conn: Tx) -> None:
            entry = store.get(conn, where.group.id, path)
            if entry is None:
                raise NotFound("File not found")
            store.replace(conn, entry.id, {**fields, **edited(entry, actor, now, keep)})

        await self._db.write(write)
        self._told(where, path, "patch")

    async def delete(
        self, principal: Principal, group_id: str, raw_path: str, *, cascade: bool
    ) -> None:
        path = values.file_path(raw_path)
        where = self._rights.open(principal, group_id)
        group_id = where.group.id
        if cascade:
            where.require_subtree(path, "delete")
            await self._db.write(lambda c: store.delete_subtree(c, group_id, path))
        else:
            where.require(path, "delete")
            if not await self._db.write(lambda c: store.delete(c, group_id, path)):
                raise NotFound("File not found")
        self._told(where, path, "delete_below" if cascade else "delete")
        await self._sweeps.collect()

    def _told(self, where: GroupFiles, path: str, operation: str) -> None:
        self.changes.emit(FileChanged(where.group.org_id, where.group.id, path, operation))

    async def download(self, group_id: str, raw_path: str, query: Mapping[str, str]) -> Download:
        """The bytes a presigned GET URL names: its signature is its guard."""
        path = values.file_path(raw_path)
        grant = self._signer.verify("GET", group_id, path, query)
        if "read" not in grant.rights:
            raise Denied("This presigned URL does not allow reading")
        if self._rights.group(group_id) is None:
            raise NotFound("File not found")
        for _ in range(OPEN_ATTEMPTS):  # an overwrite may unlink the blobs between the two
            found = self._db.read(lambda c: store.with_blobs(c, group_id, path))
            if found is None:
                raise NotFound("File not found")
            entry, blobs = found
            if grant.etag and entry.etag != grant.etag:
                raise NotFound("File not found")  # the version the URL names is gone
            with contextlib.suppress(FileNotFoundError):
                handles = await self._store.run(self._store.open, [b.blob for b in blobs])
                return _download(list(zip(handles, [b.size for b in blobs], strict=True)), entry)
        raise NotFound("File not found")

    async def _subtree(
        self, where: GroupFiles, path: str, query: ListQuery, options: ReadOptions, base: str
    ) -> Listed:
        if query.order_by != ORDER:
            raise ValidationError("order_by", "files are listed in path order")
        rules, default = where.rules(path, "read")
        scope = store.subtree(where.group.id, path) & store.permitted(rules, default)
        if options.path_filter is None:
            page = await fetch(self._db, TABLE, query, *scope)
        else:
            page = await self._filtered(scope, query, options.path_filter)
        if query.counts_only:
            return Listed("files", page)
        return self._shape(page, base, options)

    async def _filtered(self, scope: Scope, query: ListQuery, pattern: str) -> Page:
        """Filter, then paginate, over at most SCAN_CAP files past the continuation key."""
        window = store.window(scope, query.after, query.desc, SCAN_CAP)
        regex = Filter("path", "regex", values.pattern("path_filter", pattern))
        filtered = replace(query, filters=(*query.filters, regex))
        page = await fetch(self._db, TABLE, filtered, *window)
        if page.more or query.counts_only:
            return page
        scanned, last = await self._db.scan(
            lambda c: store.window_end(c, scope, query.after, query.desc, SCAN_CAP)
        )
        if scanned == SCAN_CAP and last is not None:
            page.more, page.last = True, last
        return page

    def _shape(self, page: Page, base: str, options: ReadOptions) -> Listed:
        entries: list[FileEntry] = page.rows
        if options.paths_only:
            page.rows = [e.path for e in entries]
            return Listed("paths", page)
        urls = [self._download_url(base, e, options.expires_in) for e in entries]
        if options.url_only:
            page.rows = urls
            return Listed("urls", page)
        page.rows = [shapes.present(e) for e in entries]
        if not options.info_only:
            page.extra["urls"] = urls
        return Listed("files", page)

    def _download_url(self, base: str, entry: FileEntry, expires_in: int) -> str:
        expires = int(clock.now().timestamp()) + expires_in
        grant = Grant("GET", entry.group_id, entry.path, ("read",), expires)
        return self._signer.url(base, grant)


def _one(entry: FileEntry, url: str, options: ReadOptions) -> dict[str, Any] | Redirect:
    if options.redirect:
        return Redirect(url)
    if options.url_only:
        return {"url": url}
    if options.paths_only:
        return {"paths": [entry.path]}
    if options.info_only:
        return {"file": shapes.present(entry)}
    return {"file": shapes.present(entry), "url": url}


def _download(blobs: list[tuple[BinaryIO, int]], entry: FileEntry) -> Download:
    return Download(
        blobs,
        entry.size,
        entry.etag,
        entry.content_type or "application/octet-stream",
        clock.parse(entry.uploaded_date),
    )


def edited(entry: FileEntry, actor: str, now: str, keep: int) -> dict[str, Any]:
    """What every change of a file records: a revision, who and when (the last `keep`)."""
    return {
        "revision": entry.revision + 1,
        "last_updated_by": actor,
        "last_updated_date": now,
        "updated_by_list": [actor, *entry.updated_by_list][:keep],
        "updated_date_list": [now, *entry.updated_date_list][:keep],
    }
