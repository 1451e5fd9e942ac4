"""A job's firmware: a file of a group's files store, pinned by its ETag when the job is
made (docs/jobs.md, "Artifacts").

Whoever makes the job must be able to read the file (edge/files/rights.py). Its SHA-256
is computed then, from its bytes on disk, on the blob store's threads, and remembered by
the file's ETag (`DIGESTS` of them), so five jobs over one file hash it once. A device
whose execution is released and unfinished gets a presigned GET URL of
edge/files/signing.py (served by the files room, which answers `Range`, so a download
resumes), signed with the pinned ETag, so it serves that version only (a 404 once the file
changed), and lasting until `URL_MARGIN` past the execution's deadline; no other execution
gets a URL. `changed` tells whether the file is still the one pinned, for the scheduler.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from edge.files import values
from edge.files.rights import FileRights
from edge.files.signing import Grant, UrlSigner
from edge.kernel import clock
from edge.kernel.errors import NotFound
from edge.kernel.principal import Principal
from storage import files as file_store
from storage.blobs import BlobStore
from storage.database import Database
from storage.jobs import UNFINISHED, Execution, JobCore
from storage.rows import Tx

URL_MARGIN = 3600  # seconds a URL lasts past the execution's deadline
CHUNK = 1024 * 1024
DIGESTS = 1024  # SHA-256s remembered, by (group, path, ETag)


@dataclass(frozen=True)
class Pinned:
    group_id: str
    path: str
    etag: str
    size: int
    sha256: str


class Artifacts:
    def __init__(
        self, db: Database, rights: FileRights, blobs: BlobStore, signer: UrlSigner, base: str
    ) -> None:
        self._db = db
        self._rights = rights
        self._blobs = blobs
        self._signer = signer
        self._base = base
        self._digests: dict[tuple[str, str, str], str] = {}

    async def pin(self, principal: Principal, group_id: str, raw_path: str) -> Pinned:
        """The file as it is now, which the caller must be able to read."""
        where = self._rights.open(principal, group_id)  # the group first: 404 before 400
        path = values.file_path(raw_path)
        where.require(path, "read")
        found = self._db.read(lambda c: file_store.with_blobs(c, group_id, path))
        if found is None:
            raise NotFound("artifact: no file at this path of the group")
        entry, blobs = found
        key = (group_id, path, entry.etag)
        digest = self._digests.get(key)
        if digest is None:
            digest = await self._blobs.run(self._sha256, [b.blob for b in blobs])
            if len(self._digests) >= DIGESTS:
                self._digests.clear()
            self._digests[key] = digest
        return Pinned(group_id, path, entry.etag, entry.size, digest)

    def _sha256(self, blobs: Sequence[str]) -> str:
        digest = hashlib.sha256()
        for handle in self._blobs.open(blobs):
            with handle:
                while chunk := handle.read(CHUNK):
                    digest.update(chunk)
        return digest.hexdigest()

    def url(self, job: JobCore, execution: Execution) -> str | None:
        """A download URL of the pinned artifact for a released, unfinished execution,
        lasting until `URL_MARGIN` past its deadline; None for any other."""
        group, path, etag = job.artifact_group_id, job.artifact_path, job.artifact_etag
        if group is None or path is None or etag is None or execution.deadline is None:
            return None
        if not execution.released or execution.state not in UNFINISHED:
            return None
        expires = int(clock.parse(execution.deadline).timestamp()) + URL_MARGIN
        grant = Grant("GET", group, path, ("read",), expires, etag=etag)
        return self._signer.url(self._base, grant)


def changed(conn: Tx, job: JobCore) -> str | None:
    """Why the job's artifact is no longer the one pinned ("artifact_deleted",
    "artifact_changed"), or None while it is (or the job has none)."""
    if job.artifact_group_id is None or job.artifact_path is None:
        return None
    entry = file_store.get(conn, job.artifact_group_id, job.artifact_path)
    if entry is None:
        return "artifact_deleted"
    return None if entry.etag == job.artifact_etag else "artifact_changed"
