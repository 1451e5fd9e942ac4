"""What bounds the database's memory: every connection's page cache is CACHE_KIB, and a
thread that read and ended leaves no connection (page cache, statements) open behind it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from storage.database import Database
from storage.pragmas import CACHE_KIB, configure_checkpointer

BOUND = (-CACHE_KIB,)  # a negative cache_size counts KiB, not pages


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database.open(tmp_path / "edge.db")
    yield database
    database.close()


def cache_size(conn: apsw.Connection) -> tuple[int]:
    row = conn.execute("PRAGMA cache_size").fetchone()
    assert row is not None
    return (int(row[0]),)


def test_the_sqlite_build_default_is_not_the_bound() -> None:
    """Otherwise the tests below would pass with no pragma set at all."""
    conn = apsw.Connection(":memory:")
    try:
        assert cache_size(conn) != BOUND
    finally:
        conn.close()


def test_every_reader_and_the_writer_have_the_bounded_cache(db: Database) -> None:
    assert db.read(cache_size) == BOUND  # this thread's reader
    assert db.write_sync(cache_size) == BOUND  # the writer's connection

    async def on_the_loop() -> tuple[tuple[int], tuple[int]]:
        return db.read(cache_size), await db.scan(cache_size)  # the loop's reader, a worker's

    assert asyncio.run(on_the_loop()) == (BOUND, BOUND)


def test_the_checkpointer_has_the_bounded_cache(tmp_path: Path) -> None:
    Database.open(tmp_path / "edge.db").close()
    conn = apsw.Connection(str(tmp_path / "edge.db"))
    try:
        configure_checkpointer(conn)
        assert cache_size(conn) == BOUND
    finally:
        conn.close()


def test_threads_that_read_and_ended_leave_no_connection_behind(db: Database) -> None:
    for _ in range(50):
        thread = threading.Thread(target=db.read, args=(cache_size,))
        thread.start()
        thread.join()
    db.read(cache_size)
    assert db.readers() <= 2  # this thread's, and the last ended thread's until the next opens


def test_readers_of_live_threads_stay_open(db: Database) -> None:
    started, release = threading.Barrier(4), threading.Event()

    def read_and_wait() -> None:
        db.read(cache_size)
        started.wait()
        release.wait()

    threads = [threading.Thread(target=read_and_wait) for _ in range(3)]
    for thread in threads:
        thread.start()
    started.wait()
    db.read(cache_size)  # opens this thread's reader: none of the three may be closed
    assert db.readers() == 4
    release.set()
    for thread in threads:
        thread.join()
