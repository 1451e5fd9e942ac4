"""The event loop's reads share one snapshot per loop iteration, and never hide a write.

What must hold: reads of one iteration agree with each other; the next iteration sees
what was committed elsewhere; whoever writes reads its own write at once, by `write`,
`submit` or `write_sync`; memos last one snapshot; off the loop, nothing is shared.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import apsw
import pytest

from storage.database import Database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database.open(tmp_path / "edge.db")
    database.write_sync(lambda c: c.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER)"))
    database.write_sync(lambda c: c.execute("INSERT INTO t VALUES (1, 0)"))
    yield database
    database.close()


def value(conn: apsw.Connection) -> int:
    return int(conn.execute("SELECT v FROM t WHERE k = 1").fetchone()[0])


def elsewhere(db: Database, v: int) -> None:
    """A commit by another connection: another process, or the sqlite3 shell."""
    other = apsw.Connection(str(db.path))
    other.set_busy_timeout(5000)
    other.execute("UPDATE t SET v = ? WHERE k = 1", (v,))
    other.close()


def set_to(v: int):  # type: ignore[no-untyped-def]
    return lambda conn: conn.execute("UPDATE t SET v = ? WHERE k = 1", (v,))


async def next_iteration() -> None:
    for _ in range(2):  # the snapshot's end was queued behind this task's own step
        await asyncio.sleep(0)


async def test_reads_of_one_iteration_share_a_snapshot_the_next_sees_other_commits(
    db: Database,
) -> None:
    assert db.read(value) == 0
    elsewhere(db, 1)
    assert db.read(value) == 0  # same iteration: the snapshot taken by the first read
    await next_iteration()
    assert db.read(value) == 1


@pytest.mark.parametrize("how", ["write", "submit", "write_sync"])
async def test_a_writer_reads_its_own_write_at_once(db: Database, how: str) -> None:
    assert db.read(value) == 0  # a snapshot is open
    if how == "write":
        await db.write(set_to(2))
    elif how == "submit":
        await db.submit(set_to(2))
    else:
        db.write_sync(set_to(2))
    assert db.read(value) == 2


async def test_memos_last_one_snapshot(db: Database) -> None:
    assert db.read_memo("v", value) == 0
    elsewhere(db, 3)
    assert db.read_memo("v", value) == 0
    await next_iteration()
    assert db.read_memo("v", value) == 3
    await db.write(set_to(4))
    assert db.read_memo("v", value) == 4


def test_off_the_loop_every_read_is_fresh(db: Database) -> None:
    assert db.read(value) == 0
    elsewhere(db, 5)
    assert db.read(value) == 5
    assert db.read_memo("v", value) == 5
    elsewhere(db, 6)
    assert db.read_memo("v", value) == 6


async def test_other_threads_read_outside_the_loops_snapshot(db: Database) -> None:
    assert db.read(value) == 0
    elsewhere(db, 7)
    with ThreadPoolExecutor(1) as pool:  # blocking on it keeps this loop iteration going
        assert pool.submit(db.read, value).result() == 7
        assert pool.submit(db.read_memo, "v", value).result() == 7
    assert db.read(value) == 0
    assert await db.scan(value) == 7
