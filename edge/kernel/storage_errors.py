"""Storage's refusals mapped into edge's where they leave storage, once (as httpx's
transport maps httpcore's errors in `map_httpcore_exceptions`): `edge/app.py` hands
`translated` to the Database and the BlobStore it opens, so every write refused by a full or
unwritable disk reaches the services and `api/` as edge's `DiskFull` or `NotWritable`, and
no request enters a mapping of its own.

Storage raises its own `DiskFull` and `NotWritable` (storage/space.py), since it may not
import edge. Edge's are subclasses of storage's, so background work beside storage (the
outbox, alerts, the health probe) catches either by storage's names, whoever opened the
database.
"""

from __future__ import annotations

from edge.kernel import errors
from storage import space


def translated(refused: space.DiskFull | space.NotWritable) -> errors.StorageRefused:
    """Edge's error for one of storage's refusals, with the same text (one already edge's,
    met again by an outer call of the store, as it is)."""
    if isinstance(refused, errors.StorageRefused):
        return refused
    if isinstance(refused, space.DiskFull):
        return errors.DiskFull(str(refused))
    return errors.NotWritable(str(refused))
