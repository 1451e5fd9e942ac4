"""Running out of disk, or losing write access to it: the two exceptions storage raises for
them, for blobs and database writes alike, so the interface can answer 507 or 503 whatever
was being written. Both leave nothing half-written, and both clear by themselves: the same
write succeeds once space or write access returns, without a restart."""

from __future__ import annotations

import errno

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
# A filesystem remounted read-only (as the kernel does after an I/O error), write permission
# taken away, or the device failing under the write.
UNWRITABLE_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO})


class DiskFull(Exception):
    """The disk (or the operator's filesystem quota) has no room for this write. Nothing was
    left half-written; the same write succeeds once space returns."""


class NotWritable(Exception):
    """The data folder refuses writes (read-only, permissions, I/O errors). Nothing was left
    half-written; the same write succeeds once write access returns."""


def is_full(exc: OSError) -> bool:
    return exc.errno in FULL_ERRNOS


def is_unwritable(exc: OSError) -> bool:
    return exc.errno in UNWRITABLE_ERRNOS
