"""A job's firmware: a file of a group's files store, pinned by its ETag when the job is
made (docs/jobs.md, "Artifacts").

Whoever makes the job must be able to read the file (edge/files/rights.py). Its SHA-256
is computed once then, from its bytes on disk, on the blob store's threads. Each device
gets a presigned GET URL of edge/files/signing.py (served by the files room, which answers
`Range`, so a download resumes) that outlives the execution's deadline by `URL_MARGIN`;
`changed` tells whether the file is still the one pinned, for the scheduler's check.
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
from storage.jobs import Job
from storage.rows import Tx

URL_MARGIN = 3600  # seconds a URL lasts past the execution's deadline
CHUNK = 1024 * 1024


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

    async def pin(self, principal: Principal, group_id: str, raw_path: str) -> Pinned:
        """The file as it is now, which the caller must be able to read."""
        where = self._rights.open(principal, group_id)  # the group first: 404 before 400
        path = values.file_path(raw_path)
        where.require(path, "read")
        found = self._db.read(lambda c: file_store.with_blobs(c, group_id, path))
        if found is None:
            raise NotFound("artifact: no file at this path of the group")
        entry, blobs = found
        digest = await self._blobs.run(self._sha256, [b.blob for b in blobs])
        return Pinned(group_id, path, entry.etag, entry.size, digest)

    def _sha256(self, blobs: Sequence[str]) -> str:
        digest = hashlib.sha256()
        for handle in self._blobs.open(blobs):
            with handle:
                while chunk := handle.read(CHUNK):
                    digest.update(chunk)
        return digest.hexdigest()

    def url(self, job: Job, deadline: str | None) -> str:
        """A download URL of the artifact that lasts until `URL_MARGIN` past `deadline`."""
        assert job.artifact_group_id is not None and job.artifact_path is not None
        if deadline:
            until = clock.parse(deadline).timestamp()
        else:
            until = clock.now().timestamp() + job.policy.get("timeout_seconds", 0)
        expires = int(until) + URL_MARGIN
        grant = Grant("GET", job.artifact_group_id, job.artifact_path, ("read",), expires)
        return self._signer.url(self._base, grant)


def changed(conn: Tx, job: Job) -> str | None:
    """Why the job's artifact is no longer the one pinned ("artifact_deleted",
    "artifact_changed"), or None while it is (or the job has none)."""
    if job.artifact_group_id is None or job.artifact_path is None:
        return None
    entry = file_store.get(conn, job.artifact_group_id, job.artifact_path)
    if entry is None:
        return "artifact_deleted"
    return None if entry.etag == job.artifact_etag else "artifact_changed"
