"""The writer: serialized group commits, one failing job rolls back alone, writes survive."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import apsw
import pytest

from storage.database import Database
from storage.writer import Writer
from tests.waiting import eventually


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = Database.open(tmp_path / "edge.db")
    database.write_sync(lambda c: c.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)"))
    return database


def insert(key: str, value: int):  # type: ignore[no-untyped-def]
    def job(conn: apsw.Connection) -> str:
        conn.execute("INSERT INTO t VALUES (?, ?)", (key, value))
        return key

    return job


async def test_concurrent_writes_all_commit(db: Database) -> None:
    results = await asyncio.gather(*(db.write(insert(f"k{i}", i)) for i in range(200)))
    assert results == [f"k{i}" for i in range(200)]
    assert db.read(lambda c: c.execute("SELECT count(*), sum(v) FROM t").fetchone()) == (
        200,
        sum(range(200)),
    )
    db.close()


async def test_failing_job_rolls_back_alone(db: Database) -> None:
    def half_then_fail(conn: apsw.Connection) -> None:
        conn.execute("INSERT INTO t VALUES ('half', 1)")
        raise ValueError("refused")

    outcomes = await asyncio.gather(
        db.write(insert("before", 1)),
        db.write(half_then_fail),
        db.write(insert("after", 2)),
        return_exceptions=True,
    )
    assert outcomes[0] == "before" and outcomes[2] == "after"
    assert isinstance(outcomes[1], ValueError)
    keys = db.read(lambda c: c.execute("SELECT k FROM t ORDER BY k").fetchall())
    assert keys == [("after",), ("before",)]  # nothing half-written
    db.close()


async def test_constraint_violation_is_reported_and_others_commit(db: Database) -> None:
    await db.write(insert("dup", 1))
    outcomes = await asyncio.gather(
        db.write(insert("dup", 2)), db.write(insert("fresh", 3)), return_exceptions=True
    )
    assert isinstance(outcomes[0], apsw.ConstraintError)
    assert outcomes[1] == "fresh"
    db.close()


async def test_a_write_without_savepoint_fails_alone(db: Database) -> None:
    """`savepoint=False`: a job refused before its one statement, or whose statement fails,
    changes nothing, and the batch around it commits."""
    await db.write(insert("dup", 1))

    def refuse(conn: apsw.Connection) -> None:
        conn.execute("SELECT 1").fetchone()
        raise PermissionError("refused before writing")

    outcomes = await asyncio.gather(
        db.write(insert("a", 1), savepoint=False),
        db.write(refuse, savepoint=False),
        db.write(insert("dup", 2), savepoint=False),
        db.write(insert("b", 3), savepoint=False),
        return_exceptions=True,
    )
    assert outcomes[0] == "a" and outcomes[3] == "b"
    assert isinstance(outcomes[1], PermissionError)
    assert isinstance(outcomes[2], apsw.ConstraintError)
    rows = db.read(lambda c: c.execute("SELECT k, v FROM t ORDER BY k").fetchall())
    assert rows == [("a", 1), ("b", 3), ("dup", 1)]
    db.close()


async def test_acknowledged_writes_survive_reopen(tmp_path: Path, db: Database) -> None:
    await asyncio.gather(*(db.write(insert(f"k{i}", i)) for i in range(50)))
    db.close()
    wal = tmp_path / "edge.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed and truncated on close
    again = Database.open(tmp_path / "edge.db")
    assert again.read(lambda c: c.execute("SELECT count(*) FROM t").fetchone()) == (50,)
    again.close()


def test_close_finishes_queued_writes(tmp_path: Path, db: Database) -> None:
    futures = [db._writer.submit(insert(f"q{i}", i)) for i in range(100)]
    db.close()
    assert all(f.result() == f"q{i}" for i, f in enumerate(futures))
    again = Database.open(tmp_path / "edge.db")
    assert again.read(lambda c: c.execute("SELECT count(*) FROM t").fetchone()) == (100,)
    again.close()


def test_readers_cannot_write(db: Database) -> None:
    with pytest.raises(apsw.ReadOnlyError):
        db.read(lambda c: c.execute("INSERT INTO t VALUES ('x', 1)"))
    db.close()


async def test_scan_runs_off_the_event_loop(db: Database) -> None:
    import threading

    loop_thread = threading.get_ident()
    seen = await db.scan(lambda c: threading.get_ident())
    assert seen != loop_thread
    db.close()


async def test_writes_after_close_fail_at_once(db: Database) -> None:
    from storage.writer import WriterStopped

    db.close()
    with pytest.raises(WriterStopped):
        await asyncio.wait_for(db.write(insert("late", 1)), timeout=5)


async def test_a_cancelled_write_does_not_stop_the_writer(db: Database) -> None:
    import threading

    entered, release = threading.Event(), threading.Event()

    def slow(conn: apsw.Connection) -> str:
        entered.set()
        release.wait(5)
        return "slow"

    first = asyncio.ensure_future(db.write(slow))
    await asyncio.get_running_loop().run_in_executor(None, entered.wait, 5)  # writer is busy
    doomed = asyncio.ensure_future(db.write(insert("never", 1)))
    await asyncio.sleep(0)
    doomed.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await doomed  # the cancellation has now reached the writer's future
    release.set()
    assert await first == "slow"
    assert await asyncio.wait_for(db.write(insert("later", 2)), timeout=30) == "later"
    keys = db.read(lambda c: c.execute("SELECT k FROM t ORDER BY k").fetchall())
    assert keys == [("later",)]  # the cancelled job never ran
    db.close()


async def test_writes_waiting_together_share_one_commit(db: Database) -> None:
    """Group commit: writes queued while the writer is busy run in one transaction (one
    fsync), and their coroutines are woken by one callback on the loop, not one each."""
    import threading

    entered, release = threading.Event(), threading.Event()

    def slow(conn: apsw.Connection) -> None:
        entered.set()
        release.wait(5)

    loop = asyncio.get_running_loop()
    first = asyncio.ensure_future(db.write(slow))
    await loop.run_in_executor(None, entered.wait, 5)
    waiting = [asyncio.ensure_future(db.write(insert(f"k{i}", i))) for i in range(50)]
    await asyncio.sleep(0)  # every write is queued behind the slow one
    commits_before = sum(db._writer.commits.counts)
    wakeups = []
    real = loop.call_soon_threadsafe

    def counted(callback, *args):  # type: ignore[no-untyped-def]
        wakeups.append(callback)
        return real(callback, *args)

    loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
    try:
        release.set()
        await first
        assert await asyncio.gather(*waiting) == [f"k{i}" for i in range(50)]
    finally:
        del loop.call_soon_threadsafe
    # The slow write's transaction, then one for the fifty; one hop back to the loop each.
    assert sum(db._writer.commits.counts) - commits_before == 2
    assert len(wakeups) == 2
    db.close()


async def test_a_load_without_pauses_still_checkpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes that never leave the writer idle for a second still get their WAL copied into
    the database (the soak grew a 624 MiB WAL before the writer checkpointed under load)."""
    monkeypatch.setattr("storage.writer.IDLE_CHECKPOINT_SECONDS", 3600.0)
    monkeypatch.setattr("storage.writer.BUSY_CHECKPOINT_SECONDS", 0.2)
    database = Database.open(tmp_path / "edge.db")
    database.write_sync(lambda c: c.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB)"))
    before = (tmp_path / "edge.db").stat().st_size
    for i in range(12):
        await database.write(
            lambda c, i=i: c.execute("INSERT INTO t VALUES (?, ?)", (i, b"x" * 65536))
        )
        await asyncio.sleep(0.05)
    # The database file holds the rows although the writer was never idle for its idle
    # checkpoint (an hour here): the busy checkpointer's thread copied them, by its own
    # clock, which a loaded machine may let run late (the idle-only writer never copies).
    await eventually(
        lambda: (tmp_path / "edge.db").stat().st_size > before + 256 * 1024,
        "the busy checkpointer copied the rows into the database",
    )
    assert database.read(lambda c: c.execute("SELECT count(*) FROM t").fetchone()[0]) == 12
    database.close()


async def test_closing_right_after_a_read_still_cuts_the_wal(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read on the loop keeps its snapshot open until the loop's next turn; a close in
    that same turn ends it first. Left open, it kept the writer's last checkpoint
    (TRUNCATE) from completing: the writer waited the whole busy timeout for it, then left
    the WAL as it was. Here the checkpoint may not wait, and says whether it was blocked."""
    blocked: list[int] = []

    def checkpoint(self: Writer, conn: apsw.Connection, mode: str) -> None:
        if mode == "TRUNCATE":  # the last one, at close (idle ones are PASSIVE)
            conn.set_busy_timeout(0)
            busy, _, _ = conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
            blocked.append(busy)

    monkeypatch.setattr(Writer, "_checkpoint", checkpoint)
    await db.write(insert("k", 1))
    assert db.read(lambda c: c.execute("SELECT count(*) FROM t").fetchone()) == (1,)
    db.close()
    assert blocked == [0]


async def test_a_load_without_pauses_keeps_the_wal_from_growing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past WAL_RESTART_PAGES a checkpoint runs at once, and the writer copies what came in
    meanwhile, so SQLite starts the WAL over and commits overwrite it rather than make the
    file longer (which costs each commit's fsync a journal commit of the file system: #29).
    Before, a writer never idle grew the WAL for five seconds at a time, whatever its size."""
    monkeypatch.setattr("storage.writer.IDLE_CHECKPOINT_SECONDS", 3600.0)
    monkeypatch.setattr("storage.writer.BUSY_CHECKPOINT_SECONDS", 3600.0)
    monkeypatch.setattr("storage.writer.WAL_RESTART_PAGES", 40)
    database = Database.open(tmp_path / "edge.db")
    database.write_sync(lambda c: c.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"))
    page = database.read(lambda c: c.execute("PRAGMA page_size").fetchone()[0])
    row = b"x" * page  # two pages at least per write: 1,200 pages in all
    for i in range(600):
        await database.write(lambda c, i=i: c.execute("INSERT INTO t VALUES (?, ?)", (i, row)))
    wal = (tmp_path / "edge.db-wal").stat().st_size
    # Started over, again and again: under two thirds of what was written (the old writer
    # left it longer than all of it, 1,880 pages; a loaded machine lets the checkpointer lag
    # a few hundred pages behind, 484 in one clean-clone run, so a third was too tight).
    assert wal < 800 * page
    assert database.read(lambda c: c.execute("SELECT count(*) FROM t").fetchone()) == (600,)
    database.close()
