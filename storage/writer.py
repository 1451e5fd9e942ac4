"""The one writer: a thread that owns the write connection and commits in groups.

Every write is a function of a connection. Jobs that arrive while a commit is running are
run together in the next transaction, each inside its own savepoint, so one failing job
rolls back alone while the others share a single durable commit (one fsync for many writes).
The thread also runs WAL checkpoints when it is idle, so no request pays for one. Under a
load that never leaves it idle for a second a checkpointer thread, on a connection of its
own, copies the WAL into the database every few seconds (PASSIVE: it never waits for the
writer, nor the writer for it), because such a load would otherwise grow the WAL without
end (the soak saw 624 MiB in ten minutes), and a checkpoint run on the writer's thread
held every write behind it (a 600 ms p99 with a million entries).

The checkpointer also runs as soon as the WAL passes WAL_RESTART_PAGES, whatever the time,
and the writer then copies, between two batches, the little committed meanwhile. SQLite
starts a WAL over from its first frame once a checkpoint has copied all of it (and no
reader still uses it), so the file stops growing at about that size and a commit
overwrites pages of it; a commit that makes the file longer costs its fsync a journal
commit of the file system too. On
the benchmark's machine (ext4 on a virtual disk) a one-row durable commit took 270 us
at p50 while the WAL grew and 110 to 165 us once it was started over, and a busy writer
kept growing it for the five seconds between timed checkpoints (docs/performance.md).

A coroutine's write waits on a future of its own event loop, and the writer settles all of
a batch's futures in one hop to the loop: a `concurrent.futures.Future` wrapped per write
cost the loop about 90 us of locks and wake-ups per write, as much as the write itself.

A write whose only change is its last statement may run without a savepoint (`run(fn,
savepoint=False)`): if it fails before that statement it changed nothing, and a statement
that fails is undone by SQLite itself, so there is nothing for a savepoint to roll back.
That saves two statements per write, each a release and a retake of the GIL that the
event loop is holding (a data PUT is such a write).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import apsw

from storage.latency import Latency
from storage.pragmas import configure, configure_checkpointer

T = TypeVar("T")
WriteFn = Callable[[apsw.Connection], T]
MAX_BATCH = 256
IDLE_CHECKPOINT_SECONDS = 1.0
BUSY_CHECKPOINT_SECONDS = 5.0
# Past this many pages in the WAL (4 MiB of 4 KiB pages) a checkpoint is due at once, so
# the WAL is started over and stops growing: SQLite's own automatic checkpoint's size.
WAL_RESTART_PAGES = 1000

log = logging.getLogger("edge.storage")


class WriterStopped(Exception):
    """A write arrived after the database was closed."""


@dataclass(slots=True)
class _Job:
    """One write, and who waits for it: a thread (`future`) or a coroutine (`waiter`, a
    future of `loop`)."""

    fn: Callable[[apsw.Connection], Any]
    future: concurrent.futures.Future[Any] | None = None
    waiter: asyncio.Future[Any] | None = None
    loop: asyncio.AbstractEventLoop | None = None
    savepoint: bool = True  # False: the job changes nothing but by its last statement

    def start(self) -> bool:
        """Whether the job is still wanted (its caller did not give up); from here on a
        thread's future can no longer be cancelled."""
        if self.future is not None:
            return self.future.set_running_or_notify_cancel()
        return not self.waiter.cancelled()  # type: ignore[union-attr]


Outcome = tuple[_Job, Any, BaseException | None]


class Writer:
    """Serializes all writes through one connection on one thread."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="edge-writer", daemon=True)
        self._dirty = False
        self._checkpointed = time.monotonic()
        self._busy_checkpoints = threading.Thread(
            target=self._checkpoint_while_busy, name="edge-checkpoint", daemon=True
        )
        self._stopped = threading.Event()
        self._due = threading.Event()  # a checkpoint is due now: the WAL is full, or stop
        self._tail = False  # the checkpointer emptied a full WAL: the writer copies the rest
        self._lock = threading.Lock()
        self._stopping = False
        self.commits = Latency()  # BEGIN to COMMIT of each batch, for GET /metrics

    @property
    def queue_depth(self) -> int:
        """Writes waiting for the next batch (the one being committed not counted)."""
        return self._queue.qsize()

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        self._busy_checkpoints.start()

    def submit(self, fn: WriteFn[T]) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        if not self._put(_Job(fn, future=future)):
            future.set_exception(WriterStopped("the database is closed"))
        return future

    async def run(self, fn: WriteFn[T], *, savepoint: bool = True) -> T:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[T] = loop.create_future()
        if not self._put(_Job(fn, waiter=waiter, loop=loop, savepoint=savepoint)):
            raise WriterStopped("the database is closed")
        return await waiter

    def _put(self, job: _Job) -> bool:
        with self._lock:
            if self._stopping:
                return False
            self._queue.put(job)
            return True

    def run_sync(self, fn: WriteFn[T]) -> T:
        return self.submit(fn).result()

    def stop(self) -> None:
        """Finish every queued job, checkpoint and truncate the WAL, close the connection."""
        with self._lock:
            if self._stopping:
                return
            self._stopping = True
            self._queue.put(None)
        self._stopped.set()
        self._due.set()
        if self._busy_checkpoints.is_alive():
            self._busy_checkpoints.join()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        try:
            conn = apsw.Connection(str(self._path), statementcachesize=512)
            configure(conn, writer=True)
            conn.set_wal_hook(self._committed)
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            self._loop(conn)
        finally:
            self._checkpoint(conn, "TRUNCATE")
            conn.close()

    def _loop(self, conn: apsw.Connection) -> None:
        while True:
            try:
                first = self._queue.get(timeout=IDLE_CHECKPOINT_SECONDS)
            except queue.Empty:
                if self._dirty:
                    self._checkpoint(conn, "PASSIVE")
                continue
            batch, stop = self._drain(first)
            if batch:
                self._commit(conn, batch)
            if self._tail:
                self._checkpoint(conn, "PASSIVE")
                self._tail = False
            if stop:
                return

    def _drain(self, first: _Job | None) -> tuple[list[_Job], bool]:
        if first is None:
            return [], True
        batch = [first]
        while len(batch) < MAX_BATCH:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if job is None:
                return batch, True
            batch.append(job)
        return batch, False

    def _commit(self, conn: apsw.Connection, batch: list[_Job]) -> None:
        # A job whose caller gave up (cancelled) is not run; the rest can no longer be cancelled.
        batch = [job for job in batch if job.start()]
        if not batch:
            return
        outcomes: list[Outcome] = []
        started = time.perf_counter()
        try:
            self._rollback(conn)  # a transaction a failed rollback left open
            conn.execute("BEGIN IMMEDIATE")
            for job in batch:
                outcomes.append(self._run_job(conn, job))
            conn.execute("COMMIT")
            self._dirty = True
            self.commits.observe(time.perf_counter() - started)
        except BaseException as exc:  # the whole transaction failed: every job fails with it
            self._rollback(conn)
            log.exception("write transaction failed")
            outcomes = [(job, None, exc) for job in batch]
        self._settle(outcomes)

    @staticmethod
    def _settle(outcomes: list[Outcome]) -> None:
        """Hand each job its result: threads' futures at once, each event loop's in one
        callback for the whole batch."""
        by_loop: dict[asyncio.AbstractEventLoop, list[Outcome]] = {}
        for outcome in outcomes:
            job = outcome[0]
            if job.loop is not None:
                by_loop.setdefault(job.loop, []).append(outcome)
            elif outcome[2] is None:
                job.future.set_result(outcome[1])  # type: ignore[union-attr]
            else:
                job.future.set_exception(outcome[2])  # type: ignore[union-attr]
        for loop, settled in by_loop.items():
            try:
                loop.call_soon_threadsafe(_settle_waiters, settled)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                log.warning("%d writes committed after their event loop closed", len(settled))

    @staticmethod
    def _run_job(conn: apsw.Connection, job: _Job) -> Outcome:
        if not job.savepoint:
            try:
                result = job.fn(conn)
            except Exception as exc:
                if conn.getautocommit():
                    raise  # as below: the whole transaction is gone
                return job, None, exc
            return job, result, None
        conn.execute("SAVEPOINT job")
        try:
            result = job.fn(conn)
        except Exception as exc:
            if conn.getautocommit():
                # SQLite rolled the whole transaction back (a full disk, an I/O error while
                # spilling pages): the batch fails with this cause, not "no such savepoint".
                raise
            conn.execute("ROLLBACK TO job")
            conn.execute("RELEASE job")
            return job, None, exc
        conn.execute("RELEASE job")
        return job, result, None

    @staticmethod
    def _rollback(conn: apsw.Connection) -> None:
        """End an open transaction. A rollback that fails (the disk went away) must not end
        this thread: the next batch tries again before it begins."""
        if conn.getautocommit():
            return
        try:
            conn.execute("ROLLBACK")
        except apsw.Error as exc:
            log.warning("rollback failed (%s); retried before the next write", exc)

    def _committed(self, conn: apsw.Connection, name: str, pages: int) -> int:
        """SQLite's WAL hook, after each commit: past WAL_RESTART_PAGES a checkpoint is due,
        unless the writer has yet to copy the tail of the last one."""
        if pages >= WAL_RESTART_PAGES and not self._tail and not self._due.is_set():
            self._due.set()
        return apsw.SQLITE_OK

    def _checkpoint_while_busy(self) -> None:
        """A PASSIVE checkpoint as soon as the WAL is full, and every BUSY_CHECKPOINT_SECONDS
        if the writer has not run one in that time (it runs them when idle) and has
        committed since."""
        conn: apsw.Connection | None = None
        try:
            while not self._stopped.is_set():
                full = self._due.wait(BUSY_CHECKPOINT_SECONDS / 2)
                if self._stopped.is_set() or not (full or self._timed_checkpoint_due()):
                    continue
                if conn is None:
                    conn = apsw.Connection(str(self._path))
                    configure_checkpointer(conn)
                self._busy_checkpoint(conn, full)
        finally:
            if conn is not None:
                conn.close()

    def _timed_checkpoint_due(self) -> bool:
        return self._dirty and time.monotonic() - self._checkpointed >= BUSY_CHECKPOINT_SECONDS

    def _busy_checkpoint(self, conn: apsw.Connection, full: bool) -> None:
        self._checkpointed = time.monotonic()  # `_dirty` is the writer's to clear
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except apsw.Error as exc:
            log.warning("WAL checkpoint (busy) did not complete: %s", exc)
        # What was committed meanwhile, the writer copies between two batches, when no
        # commit can come (little, or nothing to do): its next write then starts the WAL
        # over. No other is due before.
        self._due.clear()
        self._tail = full

    def _checkpoint(self, conn: apsw.Connection, mode: str) -> None:
        self._checkpointed = time.monotonic()
        try:
            conn.execute(f"PRAGMA wal_checkpoint({mode})")
            self._dirty = False
        except apsw.Error:
            log.warning("WAL checkpoint (%s) did not complete", mode)


def _settle_waiters(outcomes: list[Outcome]) -> None:
    """On the event loop: wake the coroutines of one batch (those still waiting)."""
    for job, result, error in outcomes:
        waiter = job.waiter
        if waiter is None or waiter.done():  # cancelled after its job had started
            continue
        if error is None:
            waiter.set_result(result)
        else:
            waiter.set_exception(error)
