"""Running out of disk: the one exception storage raises for it, for blobs and database
writes alike, so the interface can answer 507 whatever was being written."""

from __future__ import annotations

import errno

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


class DiskFull(Exception):
    """The disk (or the operator's filesystem quota) has no room for this write. Nothing was
    left half-written; the same write succeeds once space returns."""


def is_full(exc: OSError) -> bool:
    return exc.errno in FULL_ERRNOS
