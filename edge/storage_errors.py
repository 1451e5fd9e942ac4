"""Storage's errors mapped into edge's at the one boundary every request crosses (as
httpx's `map_httpcore_exceptions` maps httpcore's in its transport): the layer above
(`api/`) catches edge's classes and never imports storage.

Storage raises its own `DiskFull` and `NotWritable` (storage/space.py), since it may not
import edge; background work in edge (the outbox, alerts, the health probe) catches them
where it stands beside storage.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from edge import errors
from storage import space


@contextlib.contextmanager
def mapped() -> Iterator[None]:
    """Storage's refusals raised inside as edge's, the original kept as the cause."""
    try:
        yield
    except space.DiskFull as exc:
        raise errors.DiskFull(str(exc)) from exc
    except space.NotWritable as exc:
        raise errors.NotWritable(str(exc)) from exc
