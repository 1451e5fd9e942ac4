"""Running out of disk, or losing write access to it: the two exceptions storage raises for
them, for blobs and database writes alike, so the interface can answer 507 or 503 whatever
was being written. Both leave nothing half-written, and both clear by themselves: the same
write succeeds once space or write access returns, without a restart.

`check_writable` asks the disk the same question without a client's write at stake: the
health probe calls it (edge/ops/health.py), so that /v2/health says the disk is full or the
data folder read-only before, and after, any request meets it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
# A filesystem remounted read-only (as the kernel does after an I/O error), write permission
# taken away, or the device failing under the write.
UNWRITABLE_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO})
PROBE_FILE = "health-probe.tmp"  # where O_TMPFILE is not supported: one name, reused
# A filesystem without O_TMPFILE says so with one of these.
NO_TMPFILE_ERRNOS = frozenset({errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL})
PROBE_BYTES = 4096  # a block: a new file needs one, as a new blob or WAL frame does


class DiskFull(Exception):
    """The disk (or the operator's filesystem quota) has no room for this write. Nothing was
    left half-written; the same write succeeds once space returns."""


class NotWritable(Exception):
    """The data folder refuses writes (read-only, permissions, I/O errors). Nothing was left
    half-written; the same write succeeds once write access returns."""


# What a refusal becomes where it leaves storage: the layer above hands its own mapping to
# the Database and the BlobStore it opens (edge/kernel/storage_errors.py), once, as httpx's
# transport maps httpcore's errors; storage, which may import nothing above it, keeps its own.
Refusal = Callable[["DiskFull | NotWritable"], Exception]


def as_is(refused: DiskFull | NotWritable) -> Exception:
    """No mapping: storage's own refusal (tools and tests that open storage directly)."""
    return refused


def is_full(exc: OSError) -> bool:
    return exc.errno in FULL_ERRNOS


def is_unwritable(exc: OSError) -> bool:
    return exc.errno in UNWRITABLE_ERRNOS


@contextlib.contextmanager
def disk_errors() -> Iterator[None]:
    """ENOSPC and EDQUOT become DiskFull, EROFS, EACCES, EPERM and EIO NotWritable,
    whichever call met them."""
    try:
        yield
    except OSError as exc:
        if is_full(exc):
            raise DiskFull(str(exc.strerror)) from None
        if is_unwritable(exc):
            raise NotWritable(str(exc.strerror)) from None
        raise


@contextlib.contextmanager
def refusals(refusal: Refusal) -> Iterator[None]:
    """`disk_errors`, each refusal raised as `refusal` makes it, storage's kept as the cause."""
    try:
        with disk_errors():
            yield
    except (DiskFull, NotWritable) as exc:
        mapped = refusal(exc)
        if mapped is exc:
            raise
        raise mapped from exc


def check_writable(folder: Path) -> None:
    """Write a block to a new file in `folder`, fsync it and let it go: DiskFull or
    NotWritable when the disk refuses (any other OSError as it is). The database and the
    blobs live in the same data folder, so this one small write answers for both. Blocking:
    call it on a worker thread.

    The file has no name (O_TMPFILE) where the filesystem allows, so no listing of the
    folder ever shows it and no crash leaves it behind; elsewhere it is PROBE_FILE, removed
    at once."""
    with disk_errors():
        try:
            fd, path = os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o600), None
        except OSError as exc:
            if exc.errno not in NO_TMPFILE_ERRNOS:
                raise
            path = folder / PROBE_FILE
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, bytes(PROBE_BYTES))
            os.fsync(fd)  # a failing device reports EIO here, not at write()
        finally:
            os.close(fd)
            if path is not None:
                with contextlib.suppress(OSError):
                    os.unlink(path)


def free_bytes(folder: Path) -> int:
    """Bytes free to an unprivileged writer on the disk that holds `folder` (the pulse's
    disk free, docs/pulse.md)."""
    return shutil.disk_usage(folder).free
