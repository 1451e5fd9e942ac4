"""A disk that fills up or turns read-only on demand, for a server running in this process.

Tests run as root, so taking write permission away (chmod) changes nothing; the faults are
injected where the server meets the disk instead:

- SQLite: a VFS (`FaultyVFS`) made the default for the test, passing every call to the
  real one, whose files refuse writes, truncations and syncs while a fault is on: SQLITE_FULL
  for a full disk, SQLITE_READONLY (or SQLITE_IOERR, as a read-only remount gives) for a
  read-only one. Reads keep working, as they do on a real read-only filesystem.
- Blobs: the `os` that storage/blobs.py calls, wrapped: opening for writing, writing,
  fsync, rename and link fail with ENOSPC or EROFS while a fault is on; and the same for
  the `os` of storage/space.py, whose small write is the health probe's check, and of
  storage/layout.py, through which mail in file mode is written.
- `unlinks`: unlinks fail too, through that `os` and through `Path.unlink`, as on a
  read-only remount (off by default, so a test can check that a refused write leaves no
  file behind).
- `sqlite_only`: the fault is in SQLite alone (the folder still takes a small file), as
  when a large write needs room the disk no longer has but a block is still free.

Turning the fault off is all it takes to give the space or the write access back.
"""

from __future__ import annotations

import errno
import os
import pathlib
from collections.abc import Iterator
from typing import Any

import apsw
import pytest

from storage import blobs, layout, space

FULL, READ_ONLY, IO_ERROR = "full", "read-only", "io-error"
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT


class Disk:
    def __init__(self) -> None:
        self.fault: str | None = None
        self.sqlite_only = False
        self.unlinks = False  # unlinks refused too (left alone by default: cleanups work)
        self.refused = 0  # writes refused while a fault was on

    def check_sqlite(self) -> None:
        if self.fault is None:
            return
        self.refused += 1
        if self.fault == FULL:
            raise apsw.FullError("database or disk is full")
        if self.fault == READ_ONLY:
            raise apsw.ReadOnlyError("attempt to write a readonly database")
        raise apsw.exception_for(apsw.SQLITE_IOERR_WRITE)

    def check_os(self) -> None:
        if self.fault is None or self.sqlite_only:
            return
        self.refused += 1
        code = errno.ENOSPC if self.fault == FULL else errno.EROFS
        raise OSError(code, os.strerror(code))


class FaultyFile(apsw.VFSFile):  # type: ignore[misc]
    def __init__(self, disk: Disk, base: str, name: Any, flags: list[int]) -> None:
        super().__init__(base, name, flags)
        self._disk = disk

    def xLock(self, level: int) -> None:  # noqa: N802 (apsw's names)
        # A read-only connection cannot take the exclusive lock it asks for when it closes
        # (SQLITE_IOERR_LOCK), which SQLite ignores; apsw would raise it from close(), so it
        # is reported as what it means here: the lock is not to be had.
        try:
            super().xLock(level)
        except apsw.IOError:
            raise apsw.BusyError("the lock is not available") from None

    def xWrite(self, data: bytes, offset: int) -> None:  # noqa: N802
        self._disk.check_sqlite()
        super().xWrite(data, offset)

    def xTruncate(self, size: int) -> None:  # noqa: N802
        self._disk.check_sqlite()
        super().xTruncate(size)

    def xSync(self, flags: int) -> None:  # noqa: N802
        self._disk.check_sqlite()
        super().xSync(flags)


class FaultyVFS(apsw.VFS):  # type: ignore[misc]
    def __init__(self, disk: Disk) -> None:
        self._disk = disk
        self._base = apsw.vfs_names()[0]  # the default before this one: the real disk
        super().__init__("edge-faulty-disk", base=self._base, makedefault=True)

    def xOpen(self, name: Any, flags: list[int]) -> FaultyFile:  # noqa: N802
        return FaultyFile(self._disk, self._base, name, flags)


class FaultyOs:
    """`os` as storage/blobs.py sees it: writes fail while the disk has a fault."""

    def __init__(self, disk: Disk) -> None:
        self._disk = disk

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def open(self, path: Any, flags: int, mode: int = 0o777) -> int:
        if flags & WRITE_FLAGS:
            self._disk.check_os()
        return os.open(path, flags, mode)

    def write(self, fd: int, data: Any) -> int:
        self._disk.check_os()
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        self._disk.check_os()
        os.fsync(fd)

    def replace(self, source: Any, target: Any) -> None:
        self._disk.check_os()
        os.replace(source, target)

    def link(self, source: Any, target: Any) -> None:
        self._disk.check_os()
        os.link(source, target)

    def unlink(self, path: Any) -> None:
        if self._disk.unlinks:
            self._disk.check_os()
        os.unlink(path)


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Disk]:
    """The faulty disk under every database connection and blob opened during the test
    (ask for it before the site: the `config` of tests/faults/test_disk_faults.py does)."""
    found = Disk()
    vfs = FaultyVFS(found)
    monkeypatch.setattr(blobs, "os", FaultyOs(found))
    monkeypatch.setattr(space, "os", FaultyOs(found))
    monkeypatch.setattr(layout, "os", FaultyOs(found))
    unlink = pathlib.Path.unlink

    def faulty_unlink(path: pathlib.Path, missing_ok: bool = False) -> None:
        if found.unlinks:  # any Path's, while asked for: the disk is the process's
            found.check_os()
        unlink(path, missing_ok)

    monkeypatch.setattr(pathlib.Path, "unlink", faulty_unlink)
    try:
        yield found
    finally:
        found.fault = None
        vfs.unregister()
