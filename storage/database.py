"""The database: one writer thread beside reader connections.

Point queries run inline on the event loop's own reader (a few microseconds); scans,
counts and full-text searches go to a small pool of worker threads, each with its own
connection, so a long query never stalls the loop (apsw releases the GIL inside SQLite).

On the event loop, the reads of one loop iteration share one read transaction (a
snapshot), ended by a callback at the next iteration. A statement outside a transaction
opens and closes one of its own, which costs more than a point query itself (measured:
3.9 us against 0.8 us for the one-row epoch read); a request makes several. Sharing is
safe because a request that overlaps a commit may see the state before it, and every
write ends the snapshot as soon as its caller resumes, so a writer always reads what it
wrote. `read_memo` keeps an answer for the rest of the snapshot (it cannot change inside
one): the cache epochs are read once per iteration, not once per request.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import apsw

from storage import layout, migrate, search, snapshot
from storage.pragmas import configure
from storage.rows import scalar
from storage.space import DiskFull, NotWritable, Refusal, as_is
from storage.writer import WriteFn, Writer

T = TypeVar("T")
ReadFn = Callable[[apsw.Connection], T]
SCAN_WORKERS = 2
# Of the SCAN_WORKERS, how many full-text searches may hold at once: the others stay free
# for plain lists, however many searches wait (storage/search.py bounds each one).
SEARCH_WORKERS = 1


@dataclass(frozen=True)
class SearchBudget:
    """What one full-text search may spend before it is stopped (SearchTooBroad): SQLite
    virtual-machine steps (`search_max_steps`) and seconds holding its worker
    (`search_max_seconds`)."""

    steps: int = 20_000_000
    seconds: float = 2.0


# Searches one caller may have running or waiting for the search worker at once: past
# them a search is refused (SearchesQueued), so one caller cannot fill the worker's queue.
SEARCHES_PER_CALLER = 2
# Prepared statements kept per connection. apsw keeps 16 by default; one request may run a
# dozen distinct statements and the server knows a few hundred, so a small cache would
# prepare them again and again (a prepare costs more than the point query it serves).
STATEMENT_CACHE = 512
log = logging.getLogger("edge.storage")


class DatabaseClosed(Exception):
    pass


class SearchesQueued(Exception):
    """The caller already has SEARCHES_PER_CALLER searches running or waiting."""


def _snapshot_before_upgrade(path: Path, current: int, latest: int) -> Path | None:
    """Called by the migration with the database's version and the one it is about to reach,
    only when there is something to apply (an idle start probes nothing more)."""
    if current == 0 or current >= latest:
        return None
    folder = path.parent / layout.BACKUPS_DIR
    layout.private_dir(folder)
    stamp = clock_stamp()
    target = folder / f"{path.stem}-schema{current}-before-{latest}-{stamp}.db"
    snapshot.copy_database(path, target)
    target.chmod(layout.SECRET_FILE_MODE)
    log.warning(
        "upgrading the database from schema %s to %s; a copy is in %s", current, latest, target
    )
    return target


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], object]) -> None:
    """`callback` on `loop` from any thread; nothing once the loop has closed."""
    try:
        loop.call_soon_threadsafe(callback)
    except RuntimeError:
        pass


def clock_stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


DISK_REFUSALS = (apsw.FullError, apsw.ReadOnlyError, apsw.IOError, apsw.CantOpenError)


def _refused(exc: apsw.Error) -> DiskFull | NotWritable:
    """A write the disk refused (the transaction rolled back: nothing was written) becomes
    DiskFull or NotWritable; the writer stays up, and the next write tries the disk again.
    (A plain `except` at each call: a context manager per write cost 3 us.)"""
    if isinstance(exc, apsw.FullError):
        return DiskFull("the database cannot grow: the disk is full")
    return NotWritable(f"the database refused a write: {exc}")


def heartbeat(conn: apsw.Connection) -> None:
    """A real write of one page that changes nothing: the header's `user_version` set to the
    value it holds (SQLite writes the page all the same). The health probe commits it: an
    empty transaction writes nothing, so it commits on a full or read-only disk too."""
    version = int(scalar(conn, "PRAGMA user_version"))
    conn.execute(f"PRAGMA user_version = {version}")


class Database:
    def __init__(
        self,
        path: Path,
        refusal: Refusal = as_is,
        search_budget: SearchBudget = SearchBudget(),
    ) -> None:
        self.path = path
        self.search_budget = search_budget
        self._searches = asyncio.Semaphore(SEARCH_WORKERS)
        self._searches_of: Counter[str] = Counter()  # by caller: running or waiting
        # What a refused write raises: the layer above hands its mapping in (storage/space.py).
        self._refusal = refusal
        # The last write the disk refused, and how many were (the health probe reads them).
        self.refused: DiskFull | NotWritable | None = None
        self.refusals = 0
        self._writer = Writer(path)
        self._local = threading.local()
        self._connections: dict[threading.Thread, apsw.Connection] = {}  # by reading thread
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(SCAN_WORKERS, thread_name_prefix="edge-reader")
        self._closed = False
        self._snapshot = 0  # the loop reader's snapshot: 0 when none is open
        self._loop_conn: apsw.Connection | None = None  # the reader that holds it
        self._snapshots = 0  # snapshots opened, to tell memos of one from another
        self._memo: dict[str, Any] = {}

    @classmethod
    def open(
        cls,
        path: Path,
        refusal: Refusal = as_is,
        search_budget: SearchBudget = SearchBudget(),
    ) -> Database:
        """Open (creating if needed) and bring the schema up to date before any use.

        An existing database that needs migrating is first copied to `backups/` beside it,
        so an upgrade can always be undone by putting the old executable and that copy back.
        """
        migrate.apply_pending(path, before=partial(_snapshot_before_upgrade, path))
        db = cls(path, refusal, search_budget)
        db._writer.start()
        return db

    @property
    def writer(self) -> Writer:
        """The writer, for its queue depth and commit latencies (GET /metrics)."""
        return self._writer

    def sizes(self) -> dict[str, int]:
        """Bytes on disk of the database file and of its write-ahead log."""
        wal = self.path.with_name(self.path.name + "-wal")
        return {"database": _size(self.path), "wal": _size(wal)}

    def close(self) -> None:
        # The loop reader's snapshot is a read transaction: left open, the writer's last
        # checkpoint (TRUNCATE) would wait the whole busy timeout for it, then give up with
        # the WAL uncut. A close in the same loop turn as a read met exactly that.
        self.end_snapshot()
        self._closed = True
        self._pool.shutdown(wait=True)
        self._writer.stop()
        with self._lock:
            for conn in self._connections.values():
                conn.close()
            self._connections.clear()

    async def write(self, fn: WriteFn[T], *, savepoint: bool = True) -> T:
        """`fn` in the writer's next group commit, durable when this returns. `savepoint=
        False` only for a write that changes nothing but by its last statement (see
        storage/writer.py)."""
        try:
            return await self._writer.run(fn, savepoint=savepoint)
        except DISK_REFUSALS as exc:
            raise self._refused(exc) from None
        finally:
            self.end_snapshot()

    def submit(self, fn: WriteFn[T]) -> asyncio.Future[T]:
        """Queue a write now and await its commit later: writes queued this way commit in
        the order of the calls, which a coroutine started later cannot promise. A refusal
        of the disk is raised as `write` raises it."""
        return asyncio.ensure_future(self._committed(asyncio.wrap_future(self._writer.submit(fn))))

    async def _committed(self, queued: asyncio.Future[T]) -> T:
        """A submitted write's outcome, the snapshot ended before any awaiter resumes."""
        try:
            return await queued
        except DISK_REFUSALS as exc:
            raise self._refused(exc) from None
        finally:
            self.end_snapshot()

    def write_sync(self, fn: WriteFn[T]) -> T:
        try:
            return self._writer.run_sync(fn)
        except DISK_REFUSALS as exc:
            raise self._refused(exc) from None
        finally:
            self.end_snapshot()

    def read(self, fn: ReadFn[T]) -> T:
        """A short query on this thread's reader connection (inside the loop's snapshot
        when this is the event loop's thread)."""
        conn = self._reader()
        if not self._snapshot:
            self._open_snapshot(conn)
        return fn(conn)

    def read_memo(self, key: str, fn: ReadFn[T]) -> T:
        """`read`, with the answer kept for the rest of the loop's snapshot."""
        conn = self._reader()
        if not self._snapshot:
            self._open_snapshot(conn)
        if not self._snapshot or conn is not self._loop_conn:
            return fn(conn)
        if key not in self._memo:
            self._memo[key] = fn(conn)
        return self._memo[key]  # type: ignore[no-any-return]

    def _open_snapshot(self, conn: apsw.Connection) -> None:
        loop = asyncio._get_running_loop()
        if loop is None or conn.in_transaction:
            return  # not the event loop's thread (a worker, a command), or a nested read
        conn.execute("BEGIN")  # deferred: the snapshot is taken by the first read
        self._snapshots += 1
        self._snapshot = self._snapshots
        self._loop_conn = conn
        self._memo.clear()
        loop.call_soon(self._end_snapshot_of, self._snapshot)

    def _end_snapshot_of(self, snapshot: int) -> None:
        if self._snapshot == snapshot:
            self.end_snapshot()

    def end_snapshot(self) -> None:
        """End the loop reader's snapshot now (after a write: the next read sees it). Only
        the thread that holds it may: another thread's writes reach it at its next turn."""
        conn = self._loop_conn
        if not self._snapshot or conn is None or getattr(self._local, "conn", None) is not conn:
            return
        assert conn is not None
        self._snapshot = 0
        self._memo.clear()
        if self._closed:
            return
        try:
            conn.execute("COMMIT")
        except apsw.Error as exc:
            # A read transaction left open would serve this old state forever: drop it,
            # and the connection with it if even that fails (the next read opens another).
            log.warning("could not end a read snapshot (%s); rolling it back", exc)
            try:
                conn.execute("ROLLBACK")
            except apsw.Error:
                self._local.conn = None
                self._loop_conn = None

    async def scan(self, fn: ReadFn[T]) -> T:
        """A longer query on a worker thread, so the event loop keeps serving."""
        return await self._on_worker(self._pool.submit(lambda: fn(self._reader())))

    async def search(self, fn: ReadFn[T], caller: str | None = None) -> T:
        """A full-text search: `scan`, stopped past its `search_budget` (SearchTooBroad),
        and at most SEARCH_WORKERS of them on the workers at once, so plain lists never
        queue behind searches. A search's worker is counted until its query ends, even when
        its caller has left; so is its place among the SEARCHES_PER_CALLER of `caller`
        (None: not counted), past which SearchesQueued."""
        if caller is not None:
            if self._searches_of[caller] >= SEARCHES_PER_CALLER:
                raise SearchesQueued(caller)
            self._searches_of[caller] += 1
        try:
            await self._searches.acquire()
        except BaseException:
            self._leave(caller)
            raise
        loop = asyncio.get_running_loop()
        try:
            query = search.bounded(self.search_budget.steps, self.search_budget.seconds, fn)
            running = self._pool.submit(lambda: query(self._reader()))
        except BaseException:
            self._searches.release()
            self._leave(caller)
            raise
        running.add_done_callback(lambda _: _call_soon(loop, partial(self._ended, caller)))
        return await self._on_worker(running)

    def _ended(self, caller: str | None) -> None:
        """A search's query ended: its worker and its caller's place are free."""
        self._searches.release()
        self._leave(caller)

    def _leave(self, caller: str | None) -> None:
        if caller is None:
            return
        self._searches_of[caller] -= 1
        if self._searches_of[caller] <= 0:
            del self._searches_of[caller]

    async def _on_worker(self, running: Future[T]) -> T:
        try:
            return await asyncio.wrap_future(running)
        except DISK_REFUSALS as exc:  # a failing device (EIO) under a long read
            raise self._refused(exc) from None

    @contextmanager
    def counting(self) -> Iterator[Counter[str]]:
        """Count the SQL work done on this thread's reader inside the block: statements run
        and SQLite virtual-machine steps. Work, not time: the same on any machine, so tests
        can show that a check's cost does not grow with what the caller holds."""
        counts: Counter[str] = Counter()

        def profile(event: dict[str, Any]) -> None:
            counts["statements"] += 1
            counts["vm_steps"] += event["stmt_status"]["SQLITE_STMTSTATUS_VM_STEP"]
            counts["full_scan_steps"] += event["stmt_status"]["SQLITE_STMTSTATUS_FULLSCAN_STEP"]

        conn = self._reader()
        conn.trace_v2(apsw.SQLITE_TRACE_PROFILE, profile)
        try:
            yield counts
        finally:
            conn.trace_v2(0, None)

    def _refused(self, exc: apsw.Error) -> Exception:
        self.refused = _refused(exc)
        self.refusals += 1
        return self._refusal(self.refused)

    def ping(self) -> None:
        """Raise unless the database answers a trivial query on this thread's reader."""
        self._reader().execute("SELECT 1").fetchone()

    def _reader(self) -> apsw.Connection:
        if self._closed:
            raise DatabaseClosed("the database is closed")
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = apsw.Connection(
                str(self.path),
                flags=apsw.SQLITE_OPEN_READWRITE,
                statementcachesize=STATEMENT_CACHE,
            )
            configure(conn, writer=False)
            self._local.conn = conn
            with self._lock:
                self._close_readers_of_ended_threads()
                self._connections[threading.current_thread()] = conn
        return conn

    def _close_readers_of_ended_threads(self) -> None:
        """A thread that read and ended left its connection, page cache and statements
        behind: close them, so the readers open are at most the threads alive that read."""
        for thread in [t for t in self._connections if not t.is_alive()]:
            self._connections.pop(thread).close()

    def readers(self) -> int:
        """Reader connections open: one per live thread that has read (and ended threads'
        until the next reader opens)."""
        with self._lock:
            return len(self._connections)
