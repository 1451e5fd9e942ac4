"""Filter, then paginate: read a walk until `limit` matches are found, the data ends, or
MAX_PATH_FILTER_SCAN_ITEMS rows were read, and say exactly where the next page resumes; a
page whose values would pass PAGE_BYTES ends early, after the last entry that fits.

The continuation key names the last row *read* (not the last match), so a page that stopped
at the scan cap resumes after the rows it already rejected, and a client paging through
gets every match exactly once. Keys are signed (edge/listing.py CursorCodec) over the group,
the path, the walked index and the direction: an edited key, or one from another list, is
a 400.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from edge.listing import CursorCodec, ListQuery
from storage.data_walks import Walk, Walked

Key = tuple[Any, str]
# Stored JSON one page answers with, at most (its first entry whatever its size): a
# thousand entries of 1 MiB would otherwise be decoded and encoded again in memory at once.
PAGE_BYTES = 4 << 20


@dataclass
class Collected:
    rows: list[Walked] = field(default_factory=list)
    count: int = 0
    resume: Key | None = None  # where the next page starts (None: nothing is left)


def collect(
    rows: Iterable[Walked], limit: int | None, cap: int, accept: Callable[[Walked], bool]
) -> Collected:
    """Matches of a walk, in order. `limit` None counts instead of keeping rows."""
    out = Collected()
    last: Key | None = None
    read = 0
    for row in rows:
        if read == cap:
            out.resume = last
            return out
        read += 1
        if row.ok and accept(row):
            if limit is not None and out.count == limit:
                out.resume = last
                return out
            out.count += 1
            if limit is not None:
                out.rows.append(row)
        last = (row.sort, row.path)
    return out


def cut(got: Collected, kept: int) -> Collected:
    """The page ended after its first `kept` rows (their values filled the page): the next
    resumes after the last one kept, and reads again what this one read beyond it."""
    if kept >= len(got.rows):
        return got
    rows = got.rows[:kept]
    return Collected(rows, kept, (rows[-1].sort, rows[-1].path))


class DataKeys:
    """Continuation keys of data lists, signed with the site's list-key secret."""

    def __init__(self, codec: CursorCodec) -> None:
        self._codec = codec

    def encode(self, group_id: str, path: str, plan: Walk, key: Key) -> dict[str, Any]:
        return self._codec.encode(_resource(group_id, path), _order(plan), key)

    def decode(self, group_id: str, path: str, plan: Walk, text: str) -> Key:
        return self._codec.decode(_resource(group_id, path), _order(plan), text)


def _resource(group_id: str, path: str) -> str:
    return f"data:{group_id}:{path}"


def _order(plan: Walk) -> ListQuery:
    return ListQuery(order_by=plan.field, desc=plan.desc)
