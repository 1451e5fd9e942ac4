"""Storage's refusals leave storage as edge's errors, mapped once where the Database and the
BlobStore are opened (edge/kernel/storage_errors.py), not by each request."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from edge.kernel import errors, storage_errors
from storage import space
from storage.blobs import BlobStore
from storage.database import Database
from tests.faults.disk import FULL, READ_ONLY, Disk, disk  # noqa: F401


@pytest.mark.parametrize(
    ("raised", "seen"),
    [(space.DiskFull, errors.DiskFull), (space.NotWritable, errors.NotWritable)],
)
def test_a_refusal_is_translated_with_its_text(
    raised: type[Exception], seen: type[Exception]
) -> None:
    translated = storage_errors.translated(raised("No space left on device"))
    assert type(translated) is seen
    assert str(translated) == "No space left on device"
    assert isinstance(translated, raised)  # background work catches it by storage's name
    assert not isinstance(translated, errors.EdgeError)  # its text never reaches a caller


@pytest.fixture
def db(tmp_path: Path, disk: Disk) -> Iterator[Database]:  # noqa: F811
    opened = Database.open(tmp_path / "edge.db", storage_errors.translated)
    opened.write_sync(lambda c: c.execute("CREATE TABLE t (v BLOB)"))
    yield opened
    opened.close()


@pytest.mark.parametrize(
    ("fault", "seen"), [(FULL, errors.DiskFull), (READ_ONLY, errors.NotWritable)]
)
async def test_a_database_write_the_disk_refuses_raises_edges_error(
    db: Database,
    disk: Disk,  # noqa: F811
    fault: str,
    seen: type[Exception],
) -> None:
    disk.fault = fault
    with pytest.raises(seen):
        await db.write(lambda c: c.execute("INSERT INTO t VALUES (randomblob(100))"))
    with pytest.raises(seen):
        db.write_sync(lambda c: c.execute("INSERT INTO t VALUES (randomblob(100))"))
    with pytest.raises(seen):
        await db.submit(lambda c: c.execute("INSERT INTO t VALUES (randomblob(100))"))
    assert isinstance(db.refused, space.DiskFull if fault == FULL else space.NotWritable)
    disk.fault = None  # the database closes on a disk that takes writes again


def _place_on_a_full_disk(store: BlobStore, disk: Disk) -> BaseException:  # noqa: F811
    """What placing a finished blob raises when the disk is full."""
    for folder in (store.root, store.tmp):
        folder.mkdir(parents=True)
    temp = store.tmp / "part"
    temp.write_bytes(b"x")
    disk.fault = FULL
    with pytest.raises(space.DiskFull) as caught:
        store.place(temp)
    return caught.value


def test_a_blob_the_disk_refuses_raises_edges_error_with_storages_as_cause(
    tmp_path: Path,
    disk: Disk,  # noqa: F811
) -> None:
    raised = _place_on_a_full_disk(BlobStore(tmp_path, storage_errors.translated), disk)
    assert type(raised) is errors.DiskFull
    assert isinstance(raised.__cause__, space.DiskFull)


def test_storage_opened_without_a_mapping_keeps_its_own_errors(
    tmp_path: Path,
    disk: Disk,  # noqa: F811
) -> None:
    assert type(_place_on_a_full_disk(BlobStore(tmp_path), disk)) is space.DiskFull


@pytest.mark.parametrize(
    ("fault", "seen"), [(FULL, errors.DiskFull), (READ_ONLY, errors.NotWritable)]
)
async def test_any_call_of_the_blob_store_the_disk_refuses_raises_edges_error(
    tmp_path: Path,
    disk: Disk,  # noqa: F811
    fault: str,
    seen: type[Exception],
) -> None:
    """An unlink takes the store's lock file first: a refusal there is edge's too."""
    store = BlobStore(tmp_path, storage_errors.translated)
    disk.fault = fault
    try:
        with pytest.raises(seen):
            await store.run(store.unlink, ["gone"])
    finally:
        store.close()


async def test_a_received_file_the_disk_will_not_remove_either_is_edges_refusal(
    tmp_path: Path,
    disk: Disk,  # noqa: F811
) -> None:
    """The folder turns read-only while the bytes arrive: the write is refused, and so is
    removing the temporary file after it. What the receiver raises is edge's NotWritable
    all the same (an unmapped OSError from the cleanup was a 500)."""
    store = BlobStore(tmp_path, storage_errors.translated)
    for folder in (store.root, store.tmp):
        folder.mkdir(parents=True)

    async def chunks() -> AsyncIterator[bytes]:
        yield b"x" * (1 << 20)
        disk.fault, disk.unlinks = READ_ONLY, True
        for _ in range(4):
            yield b"y" * (1 << 20)

    try:
        with pytest.raises(errors.NotWritable):
            await store.receive(chunks(), 1 << 30)
    finally:
        disk.fault, disk.unlinks = None, False
        store.close()
