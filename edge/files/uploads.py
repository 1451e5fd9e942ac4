"""Uploads through presigned URLs, single-part and multipart, by the interface's table:

| Step               | PUT body                                   | Answer                      |
|--------------------|--------------------------------------------|-----------------------------|
| single-part        | no multipart fields                        | one upload URL (`url`)      |
| initiate multipart | `num_parts` only                           | `upload_id`, a URL per part |
| complete by ETags  | `completed_upload_id` + `etag_by_part`     | Success                     |
| complete by count  | `completed_upload_id` + `num_parts`        | Success                     |
| both               | `completed_upload_id` and `num_parts`      | completion wins             |

The bytes arrive as plain HTTP PUTs to the URLs (`receive`) and are streamed to disk by
the blob store; each answers the part's ETag (its MD5), as S3 does. A file is written in
this order: its blobs are in place and fsynced (a single-part upload's renamed from `tmp/`,
a multipart upload's parts linked from `uploads/`), then its rows are committed (the
upload session deleted in the same transaction), then blobs it replaced are unlinked. A
crash between any two steps leaves nothing the next start's sweep does not remove, and a
multipart upload whose completion failed can complete again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from edge.files import etags, values
from edge.files.changes import FileChanged
from edge.files.entries import edited
from edge.files.quotas import Quotas
from edge.files.rights import FileRights, GroupFiles
from edge.files.signing import Grant, UrlSigner
from edge.files.sweeps import Sweeps
from edge.kernel import clock, ids
from edge.kernel.errors import Denied, NotFound, TooLarge, ValidationError
from edge.kernel.events import Hook
from edge.kernel.principal import Principal
from storage import file_uploads
from storage import files as store
from storage.blobs import BlobStore, LimitExceeded, Received
from storage.database import Database
from storage.records import FileEntry, FileUpload, Group, UploadPart
from storage.rows import Tx

RIGHTS = ("write", "update", "delete")
KEPT_FIELDS = ("content_type", *values.INDEX_FIELDS)
GONE = "No such upload: it was completed, or it has expired"
NOT_IN_PROGRESS = "is not an upload in progress at this path"


@dataclass(frozen=True)
class Limits:
    max_upload: int  # bytes of one single-part upload or one part
    min_part: int  # bytes of every part of a multipart upload but the last
    max_parts: int


@dataclass(frozen=True)
class Written:
    """What a finished upload puts at its path: its blobs in order, `(name, size)`."""

    blobs: list[tuple[str, int]]
    size: int
    etag: str
    fields: dict[str, Any]
    actor: str | None


class Uploads:
    def __init__(
        self,
        db: Database,
        rights: FileRights,
        store: BlobStore,
        signer: UrlSigner,
        sweeps: Sweeps,
        quotas: Quotas,
        limits: Limits,
        changes: Hook[FileChanged],
    ) -> None:
        self._db = db
        self._changes = changes  # `Files.changes`: told when an upload's file is in place
        self._rights = rights
        self._store = store
        self._signer = signer
        self._sweeps = sweeps
        self._quotas = quotas
        self._limits = limits

    async def put(
        self, principal: Principal, group_id: str, raw_path: str, body: dict[str, Any], base: str
    ) -> dict[str, Any]:
        """PUT /groups/{group_id}/files/{path}: start an upload, or complete a multipart one."""
        path = values.file_path(raw_path)
        values.file_name(path)
        where = self._rights.open(principal, group_id)
        if "completed_upload_id" in body:
            return await self._complete(where, path, body)
        if "etag_by_part" in body:
            raise ValidationError("etag_by_part", "completes an upload: send completed_upload_id")
        return await self._start(where, path, body, base)

    async def receive(
        self,
        group_id: str,
        raw_path: str,
        query: Mapping[str, str],
        chunks: AsyncIterable[bytes],
        length: int | None,
    ) -> str:
        """The bytes PUT to a presigned URL (a file, or a part); returns the quoted ETag."""
        path = values.file_path(raw_path)
        grant = self._signer.verify("PUT", group_id, path, query)
        upload = self._db.read(lambda c: file_uploads.get(c, grant.upload_id))
        if upload is None or (upload.group_id, upload.path) != (group_id, path):
            raise NotFound(GONE)
        group = self._rights.group(group_id)
        if group is None:
            raise NotFound("Group not found")
        freed = 0
        if not grant.part_number:  # an overwrite frees what the file held
            current = self._db.read(lambda c: store.get(c, group_id, path))
            freed = current.size if current is not None else 0
        received = await self._stream(group_id, chunks, length, freed)
        etag = etags.of_part(received.md5)
        if grant.part_number:
            await self._keep_part(upload, grant.part_number, received)
        else:
            try:
                blob = await self._store.run(self._store.place, received.path)
            except BaseException:
                await self._store.run(self._store.discard, received.path)
                raise
            fields, size = dict(upload.fields), received.size
            written = Written([(blob, size)], size, etag, fields, upload.created_by)
            await self._commit(upload, group, grant.rights, written)
        return etags.quoted(etag)

    # -- starting ------------------------------------------------------------------------
    async def _start(
        self, where: GroupFiles, path: str, body: dict[str, Any], base: str
    ) -> dict[str, Any]:
        group = where.group
        exists = self._db.read(lambda c: store.get(c, group.id, path)) is not None
        checked = where.to_put(exists)
        where.require(path, *checked)
        num_parts = body.get("num_parts")
        if num_parts is not None:
            num_parts = values.part_count("num_parts", num_parts, self._limits.max_parts)
        expires = int(clock.now().timestamp()) + values.expires_in(body.get("expires_in"))
        upload = FileUpload(
            id=ids.new_id(),
            org_id=group.org_id,
            group_id=group.id,
            path=path,
            num_parts=num_parts,
            rights=list(checked),
            fields=_fields(body),
            created_by=where.principal.actor,
            created_date=clock.now_iso(),
            expires=clock.iso(datetime.fromtimestamp(expires, UTC)),
        )
        await self._db.write(lambda c: file_uploads.create(c, upload))
        grant = Grant("PUT", group.id, path, checked, expires, upload.id)
        if num_parts is None:
            return {"url": self._signer.url(base, grant)}
        return {"upload_id": upload.id, "urls": self._signer.part_urls(base, grant, num_parts)}

    # -- receiving -----------------------------------------------------------------------
    async def _stream(
        self, group_id: str, chunks: AsyncIterable[bytes], length: int | None, freed: int
    ) -> Received:
        """The bytes to a temporary file, capped by the upload limit and the quotas' room."""
        most = self._limits.max_upload
        too_big: TooLarge = TooLarge(f"An upload or a part may be at most {most} bytes")
        room = self._db.read(lambda c: self._quotas.room(c, group_id))
        if room is not None and room.bytes + freed < most:
            most, too_big = room.bytes + freed, room.error
        if length is not None and length > most:
            raise too_big
        try:
            received = await self._store.receive(chunks, most)
        except LimitExceeded:
            raise too_big from None
        if length is not None and received.size != length:
            await self._store.run(self._store.discard, received.path)
            raise ValidationError("body", f"ended after {received.size} of {length} bytes")
        return received

    async def _keep_part(self, upload: FileUpload, number: int, received: Received) -> None:
        try:
            name = await self._store.run(self._store.place_part, received.path, upload.id, number)
        except BaseException:
            await self._store.run(self._store.discard, received.path)
            raise
        part = UploadPart(upload.id, number, name, received.size, received.md5.hex())

        def write(conn: Tx) -> str | None:
            if file_uploads.get(conn, upload.id) is None:
                raise NotFound(GONE)
            replaced = file_uploads.put_part(conn, part)
            self._quotas.check(conn, upload.group_id)
            return replaced

        try:
            replaced = await self._db.write(write)
        except NotFound:  # completed (or swept) while this part arrived: its folder, which
            # placing this part made again, goes with the part
            await self._store.run(self._store.remove_upload, upload.id)
            raise
        except BaseException:
            await self._store.run(self._store.discard_part, upload.id, name)
            raise
        if replaced is not None:
            await self._store.run(self._store.discard_part, upload.id, replaced)

    # -- completing ----------------------------------------------------------------------
    async def _complete(self, where: GroupFiles, path: str, body: dict[str, Any]) -> dict[str, Any]:
        upload = self._open_upload(where, path, body["completed_upload_id"])
        exists = self._db.read(lambda c: store.get(c, where.group.id, path)) is not None
        where.require(path, *where.to_put(exists))
        held = tuple(r for r in RIGHTS if where.grants.at(path).has(r))
        chosen = self._chosen(
            body, upload, self._db.read(lambda c: file_uploads.parts(c, upload.id))
        )
        fields = {**upload.fields, **_fields(body)}
        try:
            blobs = await self._adopt(upload, chosen)
            etag = etags.of_multipart([bytes.fromhex(p.md5) for p in chosen])
            size = sum(p.size for p in chosen)
            written = Written(blobs, size, etag, fields, where.principal.actor)
            await self._commit(upload, where.group, held, written)
        except (FileNotFoundError, NotFound):
            # A completion beside this one finished first (its commit deleted the session,
            # then its parts went): answered as any completion of a finished upload is.
            if self._db.read(lambda c: file_uploads.get(c, upload.id)) is None:
                raise ValidationError("completed_upload_id", NOT_IN_PROGRESS) from None
            raise
        await self._store.run(self._store.remove_upload, upload.id)
        return {"message": "Success"}

    async def _adopt(
        self, upload: FileUpload, parts: Sequence[UploadPart]
    ) -> list[tuple[str, int]]:
        """The parts as the file's blobs, in order (all of them, or none)."""
        sources = [self._store.part_path(upload.id, part.file) for part in parts]
        names = await self._store.run(self._store.adopt, sources)
        return list(zip(names, [part.size for part in parts], strict=True))

    def _open_upload(self, where: GroupFiles, path: str, upload_id: Any) -> FileUpload:
        """The caller's own upload in progress at this path. Another caller's is answered as
        one that does not exist (before anything else about it is told): an upload ID that
        leaked must not let anyone else publish its bytes, under their own name."""
        field = "completed_upload_id"
        found = None
        if isinstance(upload_id, str):
            found = self._db.read(lambda c: file_uploads.get(c, upload_id))
        here = found is not None and (found.group_id, found.path) == (where.group.id, path)
        if found is None or not here or not _started_by(found, where.principal):
            raise ValidationError(field, NOT_IN_PROGRESS)
        if found.num_parts is None:
            raise ValidationError(field, "names a single-part upload: its own PUT completes it")
        if found.expires < clock.now_iso():
            raise ValidationError(field, "has expired; start the upload again")
        return found

    def _chosen(
        self, body: dict[str, Any], upload: FileUpload, received: Sequence[UploadPart]
    ) -> list[UploadPart]:
        """The parts that make the file: listed with their ETags, or 1..num_parts."""
        by_number = {p.part_number: p for p in received}
        most = upload.num_parts or self._limits.max_parts
        if "etag_by_part" in body:
            chosen = _by_etags(body, values.etag_by_part(body["etag_by_part"], most), by_number)
        elif "num_parts" in body:
            chosen = _by_count(values.part_count("num_parts", body["num_parts"], most), by_number)
        else:
            raise ValidationError(
                "completed_upload_id", "needs etag_by_part or num_parts to say which parts"
            )
        by_etags = "etag_by_part" in body
        for part in chosen[:-1]:
            if part.size < self._limits.min_part:
                raise ValidationError(
                    f"etag_by_part.{part.part_number}" if by_etags else "num_parts",
                    f"part {part.part_number} has {part.size} bytes; every part but the last"
                    f" needs at least {self._limits.min_part}",
                )
        return chosen

    # -- writing the file ----------------------------------------------------------------
    async def _commit(
        self, upload: FileUpload, group: Group, carried: Sequence[str], written: Written
    ) -> None:
        """The file's rows, with the session gone, in one transaction; its blobs are in place.
        Should the transaction fail, the new blobs go (no row ever named them)."""
        to_put = self._rights.to_put(group)

        def write(conn: Tx) -> None:
            if file_uploads.get(conn, upload.id) is None:
                raise NotFound(GONE)
            file_uploads.delete(conn, upload.id)
            existing = store.get(conn, group.id, upload.path)
            missing = [r for r in to_put[existing is not None] if r not in carried]
            if missing:
                raise Denied(f"Not permitted to {missing[0]} files at {upload.path} any more")
            _write_entry(conn, group, upload.path, existing, written)
            self._quotas.check(conn, group.id)

        try:
            await self._db.write(write)
        except BaseException:
            for blob, _ in written.blobs:
                await self._store.run(self._store.unlink_new, blob)
            raise
        self._changes.emit(FileChanged(group.org_id, group.id, upload.path, "put"))
        await self._sweeps.collect()


def _started_by(upload: FileUpload, principal: Principal) -> bool:
    """Whether `principal` is the account that started the upload (any of its sessions or
    keys). Admins and staff are no exception. A session with no `created_by` names no one,
    so anyone it was always open to may complete it."""
    return upload.created_by is None or upload.created_by == principal.actor


def _fields(body: Mapping[str, Any]) -> dict[str, Any]:
    """The content type and index fields a PUT body gives (kept for the file to get)."""
    out = values.index_fields(body)
    if "content_type" in body:
        out["content_type"] = values.content_type(body["content_type"])
    return out


def _by_etags(
    body: Mapping[str, Any], wanted: dict[int, str], by_number: dict[int, UploadPart]
) -> list[UploadPart]:
    count = body.get("num_parts")
    if count is not None and count != len(wanted):
        raise ValidationError("num_parts", f"is {count}, but etag_by_part lists {len(wanted)}")
    chosen = []
    for number, etag in wanted.items():
        part = by_number.get(number)
        if part is None:
            raise ValidationError(f"etag_by_part.{number}", f"part {number} was not uploaded")
        if part.md5 != etag:
            raise ValidationError(
                f"etag_by_part.{number}", f"does not match the ETag of part {number} as uploaded"
            )
        chosen.append(part)
    return chosen


def _by_count(count: int, by_number: dict[int, UploadPart]) -> list[UploadPart]:
    for number in range(1, count + 1):
        if number not in by_number:
            raise ValidationError("num_parts", f"part {number} of {count} was not uploaded")
    return [by_number[n] for n in range(1, count + 1)]


def _write_entry(
    conn: Tx, group: Group, path: str, existing: FileEntry | None, written: Written
) -> None:
    now = clock.now_iso()
    kept: dict[str, Any] = {name: written.fields.get(name) for name in KEPT_FIELDS}
    content = {"size": written.size, "etag": written.etag, **kept}
    if existing is not None:
        history = edited(existing, written.actor or "", now, group.num_history)
        changes = {**content, "uploaded_date": now, **history}
        store.replace(conn, existing.id, changes, written.blobs)
        return
    entry = FileEntry(
        id=ids.new_id(),
        org_id=group.org_id,
        group_id=group.id,
        path=path,
        filename=values.file_name(path),
        size=written.size,
        etag=written.etag,
        content_type=None,
        unicode_1=None,
        unicode_2=None,
        unicode_3=None,
        unicode_4=None,
        unicode_5=None,
        unicode_6=None,
        number_1=None,
        number_2=None,
        revision=1,
        uploaded_date=now,
        updated_by_list=[written.actor] if written.actor else [],
        updated_date_list=[now],
        created_date=now,
        created_by=written.actor,
        last_updated_date=now,
        last_updated_by=written.actor,
    )
    store.create(conn, dataclasses.replace(entry, **kept), written.blobs)
