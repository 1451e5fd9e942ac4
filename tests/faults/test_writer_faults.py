"""The writer under a failing disk (tests/faults/disk.py): a transaction the disk refuses
fails with what the disk said (DiskFull, NotWritable), even when SQLite had to roll the
whole transaction back in the middle of a job, and the next write works once the disk is
back: the writer thread neither dies nor keeps a broken transaction."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from storage.database import Database
from storage.space import DiskFull, NotWritable
from tests.faults.disk import FULL, IO_ERROR, READ_ONLY, Disk, disk  # noqa: F401

# More than SQLite's page cache (2 MB): the pages spill to the WAL inside the job, so the
# disk's refusal arrives mid-statement and SQLite rolls the whole transaction back.
SPILL = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)"
    " INSERT INTO t SELECT randomblob(100000) FROM n"
)


@pytest.fixture
def db(tmp_path: Path, disk: Disk) -> Iterator[Database]:  # noqa: F811
    opened = Database.open(tmp_path / "edge.db")
    opened.write_sync(lambda c: c.execute("CREATE TABLE t (v BLOB)"))
    yield opened
    opened.close()


def rows(db: Database) -> int:
    return int(db.read(lambda c: c.execute("SELECT count(*) FROM t").fetchone()[0]))


@pytest.mark.parametrize(
    ("fault", "error"), [(FULL, DiskFull), (READ_ONLY, NotWritable), (IO_ERROR, NotWritable)]
)
@pytest.mark.parametrize("statement", ["INSERT INTO t VALUES (randomblob(100))", SPILL])
async def test_a_refused_write_fails_clearly_and_the_next_one_works(
    db: Database,
    disk: Disk,  # noqa: F811
    fault: str,
    error: type[Exception],
    statement: str,
) -> None:
    disk.fault = fault
    with pytest.raises(error):
        await db.write(lambda c: c.execute(statement))
    assert disk.refused > 0
    assert rows(db) == 0  # nothing half-written
    disk.fault = None
    await asyncio.wait_for(db.write(lambda c: c.execute(statement)), 10)
    assert rows(db) in (1, 40)
    assert db.read(lambda c: c.execute("PRAGMA integrity_check").fetchall()) == [("ok",)]


async def test_jobs_sharing_a_refused_transaction_all_fail_with_its_cause(
    db: Database,
    disk: Disk,  # noqa: F811
) -> None:
    disk.fault = FULL
    small = db.write(lambda c: c.execute("INSERT INTO t VALUES (1)"))
    large = db.write(lambda c: c.execute(SPILL))
    outcomes = await asyncio.gather(small, large, return_exceptions=True)
    assert [type(o) for o in outcomes] == [DiskFull, DiskFull]
    disk.fault = None
    await db.write(lambda c: c.execute("INSERT INTO t VALUES (1)"))
    assert rows(db) == 1
