"""The blob store alone: streamed writes with MD5, limits, cleanup on failure, parts put
together in the kernel or, failing that, in user space; a full database is DiskFull."""

from __future__ import annotations

import asyncio
import errno
import hashlib
import os
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import apsw
import pytest

from storage import blobs, layout
from storage.blobs import BlobStore, LimitExceeded
from storage.database import Database
from storage.space import DiskFull, NotWritable


@pytest.fixture
def store(tmp_path: Path) -> BlobStore:
    layout.prepare(tmp_path)
    return BlobStore(tmp_path)


async def chunks(data: bytes, size: int = 7000) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


async def test_receive_hashes_and_places_every_byte(store: BlobStore) -> None:
    data = os.urandom(3 * blobs.CHUNK + 123)
    received = await store.receive(chunks(data), len(data))
    assert (received.size, received.md5) == (len(data), hashlib.md5(data).digest())
    blob = store.place(received.path)
    assert store.path_of(blob).read_bytes() == data
    assert not received.path.exists() and list(store.tmp.iterdir()) == []


async def test_past_the_limit_nothing_stays(store: BlobStore) -> None:
    with pytest.raises(LimitExceeded):
        await store.receive(chunks(os.urandom(10_000)), 9_999)
    assert list(store.tmp.iterdir()) == []


async def test_a_full_disk_is_disk_full_and_nothing_stays(store: BlobStore) -> None:
    def full(size: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    store.before_write = full
    with pytest.raises(DiskFull):
        await store.receive(chunks(os.urandom(2 * blobs.CHUNK)), 1 << 30)
    assert list(store.tmp.iterdir()) == []


async def test_a_disk_that_fills_mid_stream_is_disk_full_and_nothing_stays(
    store: BlobStore,
) -> None:
    """Chunks still in flight behind the failed write are dropped, the file goes with them."""
    writes = []

    def fills(size: int) -> None:
        writes.append(size)
        if len(writes) > 2:
            raise OSError(errno.ENOSPC, "No space left on device")

    store.before_write = fills
    data = os.urandom((2 * blobs.IN_FLIGHT + 4) * blobs.CHUNK)
    with pytest.raises(DiskFull):
        await store.receive(chunks(data, 64 * 1024), 1 << 30)
    assert list(store.tmp.iterdir()) == []


class SyncingOs:
    """`os` as storage/blobs.py sees it, counting background flushes; `fails` makes them
    meet an I/O error."""

    def __init__(self, fails: bool = False, delay: float = 0.0) -> None:
        self.flushes = 0
        self.fails = fails
        self.delay = delay

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def fdatasync(self, fd: int) -> None:
        self.flushes += 1
        time.sleep(self.delay)
        if self.fails:
            raise OSError(errno.EIO, "Input/output error")
        os.fdatasync(fd)


async def test_a_long_stream_is_flushed_while_it_arrives(
    store: BlobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """So that the final fsync finds little left to do; every byte still arrives intact."""
    syncing = SyncingOs()
    monkeypatch.setattr(blobs, "os", syncing)
    monkeypatch.setattr(blobs, "FLUSH_EVERY", blobs.CHUNK)
    data = os.urandom(6 * blobs.CHUNK)
    received = await store.receive(chunks(data, 64 * 1024), 1 << 30)
    assert received.md5 == hashlib.md5(data).digest()
    assert received.path.read_bytes() == data
    assert syncing.flushes >= 1


@pytest.mark.parametrize("still_running", [False, True])
async def test_a_background_flush_that_fails_fails_the_upload(
    store: BlobStore, monkeypatch: pytest.MonkeyPatch, still_running: bool
) -> None:
    """The flush heard of the I/O error, so the final fsync may not: the upload must not be
    acknowledged, whether a later write or the end of the stream finds out, and nothing
    stays. A flush still running at the end is waited for."""
    monkeypatch.setattr(blobs, "os", SyncingOs(fails=True, delay=0.2 if still_running else 0))
    monkeypatch.setattr(blobs, "FLUSH_EVERY", blobs.CHUNK)
    size = blobs.CHUNK if still_running else 6 * blobs.CHUNK  # one flush, after the last write
    with pytest.raises(NotWritable):
        await store.receive(chunks(os.urandom(size), blobs.CHUNK), 1 << 30)
    assert list(store.tmp.iterdir()) == []


async def test_a_broken_stream_leaves_nothing(store: BlobStore) -> None:
    async def broken() -> AsyncIterator[bytes]:
        yield os.urandom(blobs.CHUNK + 1)
        raise ConnectionResetError

    with pytest.raises(ConnectionResetError):
        await store.receive(broken(), 1 << 30)
    assert list(store.tmp.iterdir()) == []


async def test_an_abort_waits_for_a_write_off_the_event_loop(store: BlobStore) -> None:
    """A write holds the sink's lock (here: held in it until the test lets go); the stream
    fails meanwhile. Its abort waits for the lock on a worker thread: the loop goes on
    answering (this test runs on it) and the stream's error comes once the write is done,
    with nothing left behind. On the loop, the abort would hold it until the write ended
    (the hook gives up after a while, so that such a failure is a failure, not a hang)."""
    in_write, let_go, failing = threading.Event(), threading.Event(), asyncio.Event()
    gave_up: list[int] = []

    def held(size: int) -> None:
        in_write.set()
        if not let_go.wait(timeout=20):
            gave_up.append(size)

    async def breaks_mid_write() -> AsyncIterator[bytes]:
        yield os.urandom(blobs.CHUNK)
        await asyncio.get_running_loop().run_in_executor(None, in_write.wait)
        failing.set()
        raise ConnectionResetError

    store.before_write = held
    receiving = asyncio.ensure_future(store.receive(breaks_mid_write(), 1 << 30))
    await failing.wait()  # the stream failed and its abort started, the write still held
    await asyncio.sleep(0)
    assert gave_up == [] and not receiving.done()  # the loop answers; the abort waits
    let_go.set()
    with pytest.raises(ConnectionResetError):
        await receiving
    assert gave_up == [] and list(store.tmp.iterdir()) == []


def test_a_finish_that_comes_after_the_abort_leaves_other_files_alone(store: BlobStore) -> None:
    """A stream cancelled while its finish waited for a thread is aborted on another thread,
    which may take the file before the finish does; by then the descriptor's number may be
    another file's, which the finish flushed and closed."""
    sink = blobs._Sink(store)
    sink.abort()
    other = os.open(store.tmp / "other", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        assert other == sink.fd  # the lowest free number: the one the abort let go
        sink.finish()
        os.fstat(other)  # still open
    finally:
        os.close(other)
    assert not sink.path.exists()


def test_a_part_is_adopted_without_a_copy(store: BlobStore) -> None:
    part = store.uploads / "upload" / "1-x"
    part.parent.mkdir()
    part.write_bytes(b"part one")
    [blob] = store.adopt([part])
    assert store.path_of(blob).read_bytes() == b"part one"
    assert store.path_of(blob).stat().st_ino == part.stat().st_ino
    store.remove_upload("upload")
    assert store.path_of(blob).read_bytes() == b"part one"  # the blob outlives the upload


def test_the_parts_of_a_file_are_adopted_into_one_folder(store: BlobStore) -> None:
    """One folder to fsync, whatever the number of parts."""
    folder = store.uploads / "upload"
    folder.mkdir()
    parts = [folder / f"{n}-x" for n in range(1, 9)]
    for n, part in enumerate(parts):
        part.write_bytes(b"part %d" % n)
    names = store.adopt(parts)
    assert len(set(names)) == 8
    assert len({store.path_of(name).parent for name in names}) == 1
    assert [store.path_of(name).read_bytes() for name in names] == [p.read_bytes() for p in parts]


def test_unlink_waits_while_a_backup_holds_the_blobs(store: BlobStore, tmp_path: Path) -> None:
    (store.tmp / "x").write_bytes(b"x")
    blob = store.place(store.tmp / "x")
    with blobs.hold(tmp_path):
        assert store.unlink([blob]) is False
        assert store.path_of(blob).exists()
    assert store.unlink([blob]) is True
    assert not store.path_of(blob).exists()


async def test_a_full_database_is_disk_full(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "edge.db")
    try:

        def full(conn: apsw.Connection) -> None:
            raise apsw.FullError("database or disk is full")

        with pytest.raises(DiskFull):
            await db.write(full)
        assert await db.write(lambda c: 1) == 1
    finally:
        db.close()
