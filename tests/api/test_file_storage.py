"""Files on disk: a full disk (an injected ENOSPC) is a 507 with nothing half-written and the
server recovers; uploads stream through a bounded buffer; the sweeps; the trash keeps a
deleted group's files until it is erased; a backup's hold keeps blobs in place."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tracemalloc
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import apsw
import pytest

from api.errors import FULL_MESSAGE
from edge.files import sweeps
from edge.kernel import clock
from storage import blobs, files
from storage.blobs import CHUNK
from tests.files import PART, blob_paths, relative
from tests.world import World

pytestmark = pytest.mark.world("content", files_min_part_bytes=PART)


def blob_of(world: World, path: str) -> Path:
    [blob] = blob_paths(world, path)
    return blob


def on_disk(world: World) -> list[str]:
    return [n for names in world.site.services.blobs.names_on_disk() for n in names]


def fills_up(after: int = 0) -> object:
    """A `before_write` that lets `after` writes through, then finds the disk full."""
    calls = 0

    def before_write(size: int) -> None:
        nonlocal calls
        calls += 1
        if calls > after:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    return before_write


# -- a full disk -----------------------------------------------------------------------
async def test_a_full_disk_mid_file_is_507_with_nothing_half_written(world: World) -> None:
    store = world.site.services.blobs
    store.before_write = fills_up(after=1)  # type: ignore[assignment]
    data = os.urandom(3 * CHUNK)  # the first chunk reaches the disk, the second does not
    status, body = await world.upload("file_editor", "f.bin", data)
    assert (status, json.loads(body)) == (507, {"message": FULL_MESSAGE})
    assert await world.stored("f.bin") is None
    assert list(store.tmp.iterdir()) == [] and on_disk(world) == []
    store.before_write = blobs._no_fault
    assert (await world.upload("file_editor", "f.bin", data))[0] == 200  # space came back


async def test_a_full_disk_while_completing_keeps_the_upload(world: World) -> None:
    store = world.site.services.blobs
    status, started = await world.files("file_editor", "PUT", "m.bin", json={"num_parts": 2})
    parts = [os.urandom(PART), b"end"]
    for url, data in zip(started["urls"], parts, strict=True):
        assert (await world.send(url, data))[0] == 200
    store.before_write = fills_up()  # type: ignore[assignment]
    complete = {"completed_upload_id": started["upload_id"], "num_parts": 2}
    status, body = await world.files("file_editor", "PUT", "m.bin", json=complete)
    assert (status, body) == (507, {"message": FULL_MESSAGE})
    assert list(store.tmp.iterdir()) == [] and on_disk(world) == []
    store.before_write = blobs._no_fault
    assert (await world.files("file_editor", "PUT", "m.bin", json=complete))[0] == 200
    status, body = await world.files("file_reader", "GET", "m.bin")
    assert (await world.fetch(body["url"]))[1] == b"".join(parts)


async def test_a_full_database_is_507_and_the_new_blob_goes(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: object) -> None:
        raise apsw.FullError("database or disk is full")

    monkeypatch.setattr(files, "create", full)
    status, body = await world.upload("file_editor", "db.bin", b"bytes")
    assert (status, json.loads(body)) == (507, {"message": FULL_MESSAGE})
    assert on_disk(world) == []
    monkeypatch.undo()
    assert (await world.upload("file_editor", "db.bin", b"bytes"))[0] == 200


# -- a bounded buffer ------------------------------------------------------------------
async def test_an_upload_streams_through_a_bounded_buffer(world: World) -> None:
    """48 MiB go through while Python's allocations peak at a few MiB: the body is never
    held whole (the bench measures the server's RSS for 256 MiB)."""
    size, piece = 48 * 1024 * 1024, b"\x5a" * 65536
    status, reply = await world.files("file_editor", "PUT", "stream.bin", json={})

    async def body() -> AsyncIterator[bytes]:
        for _ in range(size // len(piece)):
            yield piece  # the same object every time: the client keeps no copy

    tracemalloc.start()
    try:
        response = await world.api.client.put(relative(reply["url"]), data=body())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    expected = hashlib.md5(piece * (size // len(piece))).hexdigest()
    assert (response.status, response.headers["ETag"]) == (200, f'"{expected}"')
    assert peak < 12 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"


# -- sweeps ----------------------------------------------------------------------------
async def test_abandoned_uploads_are_swept_after_their_expiry(world: World) -> None:
    services = world.site.services
    body = {"num_parts": 2, "expires_in": 60}
    status, started = await world.files("file_editor", "PUT", "old.bin", json=body)
    assert (await world.send(started["urls"][0], b"x"))[0] == 200
    folder = services.blobs.uploads / started["upload_id"]
    assert folder.is_dir()
    await services.file_sweeps.sweep()
    assert folder.is_dir()  # not yet expired
    clock.advance(timedelta(seconds=60) + sweeps.GRACE + timedelta(seconds=1))
    await services.file_sweeps.sweep()
    assert not folder.exists()
    assert services.db.read(
        lambda c: c.execute("SELECT count(*) FROM file_uploads").fetchone()
    ) == (0,)


async def test_recovery_removes_what_a_crash_left(world: World) -> None:
    services = world.site.services
    assert (await world.upload("file_editor", "kept.txt", b"kept"))[0] == 200
    (services.blobs.tmp / "blob-interrupted.tmp").write_bytes(b"half")
    orphan = services.blobs.path_of("zzORPHANzzzzzzzzzzzzzzzz")
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_bytes(b"renamed, never indexed")
    abandoned = services.blobs.uploads / "noSuchUpload0000" / "1-x"
    abandoned.parent.mkdir(parents=True)
    abandoned.write_bytes(b"part")
    await services.file_sweeps.recover()
    assert list(services.blobs.tmp.iterdir()) == []
    assert not orphan.exists() and not abandoned.parent.exists()
    assert blob_of(world, "/kept.txt").read_bytes() == b"kept"


async def test_a_backup_hold_keeps_blobs_until_it_ends(world: World) -> None:
    services = world.site.services
    await world.upload("file_editor", "held.txt", b"held")
    blob = blob_of(world, "/held.txt")
    with blobs.hold(services.config.data_dir):
        assert (await world.files("file_deleter", "DELETE", "held.txt"))[0] == 200
        assert blob.exists()  # the backup may still copy it
    assert blob.exists()
    await services.file_sweeps.collect()
    assert not blob.exists()
    assert services.db.read(lambda c: files.gone(c)) == []


# -- the trash -------------------------------------------------------------------------
async def test_a_deleted_group_keeps_its_files_until_restored(world: World) -> None:
    await world.upload("file_editor", "t.txt", b"trash me")
    blob = blob_of(world, "/t.txt")
    assert (await world.call("org_admin", "DELETE", f"/v2/groups/{world.files_group_id}"))[0] == 200
    assert (await world.files("file_editor", "GET", "t.txt"))[0] == 404
    assert blob.exists()
    status, _ = await world.call("org_admin", "POST", f"/v2/trash/{world.files_group_id}/restore")
    assert status == 200
    status, body = await world.files("file_reader", "GET", "t.txt")
    assert status == 200 and (await world.fetch(body["url"]))[1] == b"trash me"


async def test_erasing_a_group_erases_its_files(world: World) -> None:
    await world.upload("file_editor", "e.txt", b"erase me")
    blob = blob_of(world, "/e.txt")
    await world.call("org_admin", "DELETE", f"/v2/groups/{world.files_group_id}")
    assert (await world.call("org_admin", "DELETE", f"/v2/trash/{world.files_group_id}"))[0] == 200
    assert not blob.exists()
    rows = world.site.services.db.read(lambda c: c.execute("SELECT count(*) FROM files").fetchone())
    assert rows == (0,)


async def test_a_permanent_delete_and_the_purge_erase_files(world: World) -> None:
    services = world.site.services
    await world.upload("project_admin", "p.txt", b"p", group=world.strict_group_id)
    await world.upload("file_editor", "q.txt", b"q")
    strict, group = blob_of(world, "/p.txt"), blob_of(world, "/q.txt")
    path = f"/v2/groups/{world.strict_group_id}?permanent=true"
    assert (await world.call("org_admin", "DELETE", path))[0] == 200
    assert not strict.exists() and group.exists()
    await world.call("org_admin", "DELETE", f"/v2/groups/{world.files_group_id}")
    clock.advance(timedelta(days=31))
    from storage import trash

    await services.db.write(lambda c: trash.purge_expired(c, clock.now_iso()))
    await services.file_sweeps.sweep()
    assert not group.exists()
