"""The blob store: the bytes of files on local disk, under the data folder's `blobs/`.

Every blob is streamed to a temporary file in `tmp/` (hashed as it goes), fsynced, renamed
into place and its folder fsynced: a reader never sees half a file, and a crash leaves at
most a temporary file or a blob no index row names, both removed by the next start's sweep.
Blobs never change in place; a new upload makes a new blob, and the old one is unlinked
once no row names it. Parts of multipart uploads wait in `uploads/<upload id>/`; on
completion each becomes one of the file's blobs (a hard link: no byte is copied again).

The stream is read through a bounded buffer: chunks are hashed and written by worker
threads (`_Lane`: a thread goes straight on to the next chunk that waits) while the next is
read from the network, at most IN_FLIGHT chunks behind, so memory stays a few MiB whatever
the size of the upload, and MD5 runs beside the event loop rather than on it.

A backup holds the blobs (a shared lock on `blobs.lock`, `hold`) while it copies them;
unlinking takes that lock exclusively and leaves the work to the next sweep when it cannot.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import fcntl
import functools
import hashlib
import os
import secrets
import shutil
import threading
from collections import deque
from collections.abc import AsyncIterable, Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from storage import layout, space

CHUNK = 1 << 20  # bytes handed to the worker threads at a time
IN_FLIGHT = 2  # chunks handed over and not yet hashed and written, per stream
FLUSH_EVERY = 4 << 20  # bytes written between background flushes of a stream's file
WORKERS = 16
T = TypeVar("T")
NAME_LENGTH = 24
FOLDER_LENGTH = 2  # a blob lives in the folder named by the first characters of its name
TEMP_PREFIX, TEMP_SUFFIX = "blob-", ".tmp"


class LimitExceeded(Exception):
    """The stream went past the number of bytes it was allowed."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


@dataclass(frozen=True)
class Received:
    """A stream written to a temporary file, fsynced, with its size and MD5 digest."""

    path: Path
    size: int
    md5: bytes


def _no_fault(size: int) -> None:
    """The default of `BlobStore.before_write`: the disk has room."""


def new_name() -> str:
    """96 random bits in hex, from one call to the OS (a name per upload, on the hot path)."""
    return secrets.token_hex(NAME_LENGTH // 2)


def _sync_file_range() -> Callable[[int, int, int], None]:
    """Linux's sync_file_range(2) with SYNC_FILE_RANGE_WRITE: start writing a range of a file
    to disk and return at once. Python does not wrap it; elsewhere it is a no-op."""
    try:
        call = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).sync_file_range
    except (OSError, AttributeError, TypeError):
        return lambda fd, offset, length: None
    call.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
    call.restype = ctypes.c_int
    return lambda fd, offset, length: call(fd, offset, length, 2)  # SYNC_FILE_RANGE_WRITE


start_writeback = _sync_file_range()


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def hold(data_dir: Path) -> Iterator[None]:
    """Keep every blob in place while a backup copies them (a shared lock)."""
    fd = os.open(data_dir / layout.BLOBS_LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


class _Sink:
    """The temporary file a stream goes to. Each chunk is hashed by one worker thread while
    another writes it (MD5 and the copy to the page cache run side by side); the write holds
    a lock so an abort never races it.

    Each write also starts the disk on what it wrote (`start_writeback`, which does not wait),
    so the disk works while the rest arrives. That alone leaves the final fsync a long wait
    (0.3 s after 256 MiB on the project machine, whatever the rate the bytes came at): the
    device's own cache still holds what writeback sent it, and only a flush empties it. So
    every FLUSH_EVERY bytes a worker thread flushes what is written so far (`_flush`, one at
    a time per file) while the rest arrives, and the final fsync, which still answers for
    every byte, finds little left (10 ms; 4 MiB between flushes ended the parts of a
    multipart upload sooner than 8 MiB, at no cost to single uploads)."""

    def __init__(self, store: BlobStore) -> None:
        self.path = store.tmp / f"{TEMP_PREFIX}{new_name()}{TEMP_SUFFIX}"
        with space.refusals(store.refusal):
            self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self.md5 = hashlib.md5(usedforsecurity=False)
        self._store = store
        self._lock = threading.Lock()
        self._closed = False
        self._written = 0
        self._flushed = 0  # bytes written when the last flush started
        # The flush under way, with the descriptor it owns (a duplicate, so that an abort
        # can close the file without waiting for it).
        self._flush: tuple[Future[None], int] | None = None

    def hash(self, pieces: list[bytes]) -> None:
        for piece in pieces:
            self.md5.update(piece)

    def write(self, pieces: list[bytes]) -> None:
        with self._lock, space.refusals(self._store.refusal):
            if self._closed:
                return
            size = sum(len(p) for p in pieces)
            self._store.before_write(size)
            _write_all(self.fd, pieces)
            start_writeback(self.fd, self._written, size)
            self._written += size
            if self._written - self._flushed >= FLUSH_EVERY:
                self._start_flush()

    def _start_flush(self) -> None:
        """Flush in the background unless a flush is still under way. The one before must
        have succeeded: an I/O error is reported once per open file, so the one it went to
        is the only one to hear of it."""
        if self._flush is not None:
            running, _ = self._flush
            if not running.done():
                return
            running.result()
        self._flushed = self._written
        fd = os.dup(self.fd)
        try:
            self._flush = (self._store.submit_blocking(_flush, fd), fd)
        except BaseException:  # the store is closing
            os.close(fd)
            raise

    def finish(self) -> None:
        """Flush and close the file. A stream cancelled while its finish waited for a thread
        is aborted on another thread, which may take the lock first: the descriptor is then
        closed, and its number may already be another file's (or socket's), which an fsync
        and a close here would flush and close under its owner's feet."""
        with self._lock, space.refusals(self._store.refusal):
            if self._closed:
                return
            self._store.before_write(0)
            self._end_flush(wait=True)
            os.fsync(self.fd)
            os.close(self.fd)
            self._closed = True

    def abort(self) -> None:
        """Close and remove the file. Blocking: the lock waits out a write (or a finish's
        fsync) under way, so the event loop hands this to a worker thread (`_abort_soon`)."""
        with self._lock:
            if not self._closed:
                self._end_flush(wait=False)
                os.close(self.fd)
                self._closed = True
        with space.refusals(self._store.refusal):  # as the write it follows
            _remove(self.path)

    def _end_flush(self, wait: bool) -> None:
        """A flush not yet started is called off (its descriptor closed here); one under way
        is waited for, and its error raised, when the outcome matters (`wait`)."""
        if self._flush is None:
            return
        running, fd = self._flush
        self._flush = None
        if running.cancel():
            os.close(fd)
        elif wait:
            running.result()


def _flush(fd: int) -> None:
    """Make what a descriptor's file holds so far durable, then close the descriptor."""
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, pieces: list[bytes]) -> None:
    """All the pieces, in as few system calls as the kernel allows (a short write resumes)."""
    views = [memoryview(p) for p in pieces if p]
    while views:
        done = os.writev(fd, views[:1024])  # IOV_MAX
        while done and done >= len(views[0]):
            done -= len(views.pop(0))
        if done:
            views[0] = views[0][done:]


class _Lane:
    """One kind of work on a stream's chunks (hashing, or writing), done in order on the
    store's threads. A thread that finishes a chunk takes the next one if it is already
    waiting, with no round trip through the event loop; it gives the thread back as soon as
    nothing waits, so a slow client never holds one. Each chunk's future is resolved on
    the loop."""

    def __init__(self, pool: ThreadPoolExecutor, work: Callable[[list[bytes]], None]) -> None:
        self._pool = pool
        self._work = work
        self._lock = threading.Lock()
        self._waiting: deque[tuple[list[bytes], asyncio.Future[None]]] = deque()
        self._running = False

    def put(self, pieces: list[bytes]) -> asyncio.Future[None]:
        done = asyncio.get_running_loop().create_future()
        with self._lock:
            self._waiting.append((pieces, done))
            if self._running:
                return done
            self._running = True
        self._pool.submit(self._drain)
        return done

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._waiting:
                    self._running = False
                    return
                pieces, done = self._waiting.popleft()
            try:
                self._work(pieces)
            except BaseException as exc:  # handed to the awaiting stream, which aborts
                done.get_loop().call_soon_threadsafe(_settle, done, exc)
            else:
                done.get_loop().call_soon_threadsafe(_settle, done, None)


def _abort_made(making: asyncio.Future[_Sink]) -> None:
    if not making.cancelled() and making.exception() is None:
        _abort_soon(making.result())


def _abort_soon(sink: _Sink) -> Future[None] | None:
    """Abort a sink on the store's threads, never on the event loop: the abort waits for the
    sink's lock, which a write holds for the length of a write and a finish across an fsync.
    Once the store's threads are gone (it is closing), nothing can hold the lock: at once."""
    try:
        return sink._store.submit_blocking(sink.abort)
    except RuntimeError:  # cannot schedule new futures after shutdown
        sink.abort()
        return None


async def _aborted(sink: _Sink, cause: BaseException) -> None:
    """Abort a failed stream's sink off the loop and wait for it, so that the temporary file
    is gone when the stream's error is raised. A second cancel does not call the abort off;
    a coroutine closed unfinished (GeneratorExit) may not wait: it only starts the abort."""
    aborting = _abort_soon(sink)
    if aborting is not None and not isinstance(cause, GeneratorExit):
        await asyncio.shield(asyncio.wrap_future(aborting))


def _settle(future: asyncio.Future[None], exc: BaseException | None) -> None:
    if future.done():  # the stream was cancelled meanwhile
        return
    if exc is None:
        future.set_result(None)
    else:
        future.set_exception(exc)


class BlobStore:
    """Blobs of one data folder. Blocking calls are meant for worker threads."""

    def __init__(self, data_dir: Path, refusal: space.Refusal = space.as_is) -> None:
        self.root = data_dir / layout.BLOBS_DIR
        self.refusal = refusal  # what a full or unwritable disk raises (storage/space.py)
        self.tmp = data_dir / layout.TMP_DIR
        self.uploads = data_dir / layout.UPLOADS_DIR
        self._lock_path = data_dir / layout.BLOBS_LOCK_FILE
        # Called before every write to disk with its size: the seam where tests inject a
        # full disk (an OSError with errno ENOSPC), whoever runs them.
        self.before_write: Callable[[int], None] = _no_fault
        # Many uploads wait on fsync at once; the filesystem commits their journal together.
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="edge-blobs")

    def path_of(self, blob: str) -> Path:
        return self.root / blob[:FOLDER_LENGTH] / blob

    async def receive(self, chunks: AsyncIterable[bytes], limit: int) -> Received:
        """Stream to a temporary file through a bounded buffer, computing MD5 over every
        byte. LimitExceeded past `limit` bytes, DiskFull when the disk is; either way the
        temporary file is gone."""
        sink = await self._new_sink()
        hashing, writing = _Lane(self._pool, sink.hash), _Lane(self._pool, sink.write)
        in_flight: deque[asyncio.Future[None]] = deque()  # a hash and a write per chunk
        pieces: list[bytes] = []  # as received: handed over without copying
        held = size = 0
        try:
            async for chunk in chunks:
                pieces.append(chunk)
                held, size = held + len(chunk), size + len(chunk)
                if size > limit:
                    raise LimitExceeded(limit)
                if held >= CHUNK:
                    while len(in_flight) >= 2 * IN_FLIGHT:
                        await in_flight.popleft()
                    in_flight.extend((hashing.put(pieces), writing.put(pieces)))
                    pieces, held = [], 0
            in_flight.extend((hashing.put(pieces), writing.put(pieces)))
            while in_flight:
                await in_flight.popleft()
            await self.run(sink.finish)
        except BaseException as exc:
            for waiting in in_flight:  # their outcome no longer matters (nor is it logged)
                if waiting.done() and not waiting.cancelled():
                    waiting.exception()
                waiting.cancel()
            await _aborted(sink, exc)
            raise
        return Received(sink.path, size, sink.md5.digest())

    async def _new_sink(self) -> _Sink:
        """A sink, made on a worker thread (creating a file may wait on the disk). Should the
        stream be cancelled meanwhile (a shutdown; a test server on a client hanging up), the
        file is made all the same: it is removed once made, not left to the next start."""
        making = self._submit(_Sink, self)
        try:
            return await asyncio.shield(making)
        except asyncio.CancelledError:
            making.add_done_callback(_abort_made)
            raise

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """A blocking call of this store on its own threads (disk waits must not hold the
        event loop, nor queue behind other work in the loop's default pool)."""
        return await self._submit(fn, *args)

    def submit_blocking(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """A blocking call on this store's threads, from any thread (no event loop needed)."""
        return self._pool.submit(fn, *args)

    def _submit(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        call = functools.partial(self._refusing, fn, *args)
        return asyncio.get_running_loop().run_in_executor(self._pool, call)

    def _refusing(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn` with the disk's refusals raised as `refusal` makes them, whichever call of
        the store met them (an unlink's lock file, a part replaced, an upload removed)."""
        with space.refusals(self.refusal):
            return fn(*args)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def place(self, temp: Path) -> str:
        """Rename a finished temporary file into the store; returns the new blob's name."""
        blob = new_name()
        with space.refusals(self.refusal):
            folder = self._folder(self.root / blob[:FOLDER_LENGTH], self.root)
            os.replace(temp, folder / blob)
            fsync_dir(folder)
        return blob

    def place_part(self, temp: Path, upload_id: str, part_number: int) -> str:
        """Rename a received part into its upload's folder; returns the part file's name."""
        name = f"{part_number}-{new_name()}"
        with space.refusals(self.refusal):
            folder = self._folder(self.uploads / upload_id, self.uploads)
            os.replace(temp, folder / name)
            fsync_dir(folder)
        return name

    def part_path(self, upload_id: str, name: str) -> Path:
        return self.uploads / upload_id / name

    def adopt(self, parts: Sequence[Path]) -> list[str]:
        """Received parts become the blobs of their file, in order: hard-linked into the
        store (their bytes were fsynced when they arrived; nothing is copied), all in one
        folder, fsynced once: with a folder each, every fsync was a flush of the disk, and 8
        parts took 7 to 23 ms. The parts stay where they were, so a failed or interrupted
        completion can be retried, until their upload's folder goes. All of them, or none."""
        names: list[str] = []
        try:
            with space.refusals(self.refusal):
                self.before_write(0)
                prefix = new_name()[:FOLDER_LENGTH]  # one folder for them all: one fsync
                folder = self._folder(self.root / prefix, self.root)
                for part in parts:
                    blob = prefix + new_name()[FOLDER_LENGTH:]
                    os.link(part, folder / blob)
                    names.append(blob)
                fsync_dir(folder)
        except BaseException:
            for name in names:
                self.unlink_new(name)
            raise
        return names

    def discard(self, temp: Path) -> None:
        """Remove a received file that was not placed (call it through `run`, as every
        call of the store: a disk that refuses the unlink is a refusal like any other)."""
        _remove(temp)

    def discard_part(self, upload_id: str, name: str) -> None:
        """Remove a part file of an upload (through `run`, as `discard`)."""
        _remove(self.part_path(upload_id, name))

    def unlink(self, blobs: Iterable[str]) -> bool:
        """Unlink blobs unless a backup holds the store (then False: the sweep retries)."""
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            for blob in blobs:
                self.path_of(blob).unlink(missing_ok=True)
            return True
        finally:
            os.close(fd)

    def unlink_new(self, blob: str) -> None:
        """Unlink a blob no committed row ever named (no backup can be copying it)."""
        _remove(self.path_of(blob))

    def remove_upload(self, upload_id: str) -> None:
        shutil.rmtree(self.uploads / upload_id, ignore_errors=True)

    def open(self, blobs: Iterable[str]) -> list[BinaryIO]:
        """Blobs for reading, all opened before a byte is sent; FileNotFoundError if one is
        gone (none stays open then). Once open, an unlink or an overwrite cannot change what
        the reader gets."""
        opened: list[BinaryIO] = []
        try:
            for blob in blobs:
                opened.append(open(self.path_of(blob), "rb"))
        except BaseException:
            for handle in opened:
                handle.close()
            raise
        return opened

    # -- what a sweep looks at ----------------------------------------------------------
    def names_on_disk(self) -> Iterator[list[str]]:
        """Blob names found on disk, one folder at a time."""
        if not self.root.is_dir():
            return
        for folder in sorted(self.root.iterdir()):
            if folder.is_dir():
                yield sorted(p.name for p in folder.iterdir() if p.is_file())

    def upload_folders(self) -> list[str]:
        if not self.uploads.is_dir():
            return []
        return sorted(p.name for p in self.uploads.iterdir() if p.is_dir())

    def clear_temporary(self) -> int:
        """Remove temporary files a crash left behind (only at start: nothing is in flight)."""
        found = list(self.tmp.glob(f"{TEMP_PREFIX}*{TEMP_SUFFIX}")) if self.tmp.is_dir() else []
        for path in found:
            path.unlink(missing_ok=True)
        return len(found)

    @staticmethod
    def _folder(folder: Path, parent: Path) -> Path:
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            fsync_dir(parent)
        return folder


def _remove(path: Path) -> None:
    """Unlink a file, already gone or not, through this module's `os` (the disk's calls
    are all made here, where a test's faulty disk meets them)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
