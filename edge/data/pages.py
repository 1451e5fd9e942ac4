"""Filter, then paginate: read a walk until `limit` matches are found, the data ends, or
MAX_PATH_FILTER_SCAN_ITEMS rows were read, and say exactly where the next page resumes; a
page whose values would pass PAGE_BYTES ends early, after the last entry that fits.

The continuation key names the last row *read* (not the last match), so a page that stopped
at the scan cap resumes after the rows it already rejected, and a client paging through
gets every match exactly once. Keys are signed (edge/kernel/listing.py CursorCodec) over the group,
the path, the walked index and the direction: an edited key, or one from another list, is
a 400.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from edge.data.plans import MAX_PATH_FILTER_SCAN_ITEMS
from edge.kernel.listing import CursorCodec, ListQuery
from storage.data_walks import Walk, Walked
from storage.patterns import PatternBudget

Key = tuple[Any, str]
START: Key = ("", "")  # the key of a page that read nothing: resume from the beginning
# Stored JSON one request answers with, at most (its first entry whatever its size): a
# thousand entries of 1 MiB would otherwise be decoded and encoded again in memory at once.
PAGE_BYTES = 4 << 20


@dataclass
class ReadBudget:
    """What one request may still read and answer, across all of its pages: rows walked
    (the scan cap), stored JSON sent (PAGE_BYTES; the request's first entry whatever its
    size) and pattern-matching time."""

    rows_left: int = MAX_PATH_FILTER_SCAN_ITEMS
    bytes_left: int = field(default_factory=lambda: PAGE_BYTES)  # read late: tests patch it
    answered: bool = False  # whether an entry was sent yet (the first always is)
    patterns: PatternBudget = field(default_factory=PatternBudget)

    def spent(self, values: bool) -> bool:
        """Whether a page can read nothing more (`values`: a page of entries, not paths)."""
        return self.rows_left <= 0 or (values and self.answered and self.bytes_left <= 0)

    def charge(self, rows: int, sent: int = 0, entries: int = 0) -> None:
        self.rows_left -= rows
        self.bytes_left -= sent
        self.answered = self.answered or entries > 0


@dataclass
class Collected:
    rows: list[Walked] = field(default_factory=list)
    count: int = 0
    resume: Key | None = None  # where the next page starts (None: nothing is left)
    read: int = 0  # rows read, matching or not


def collect(
    rows: Iterable[Walked], limit: int | None, cap: int, accept: Callable[[Walked], bool]
) -> Collected:
    """Matches of a walk, in order. `limit` None counts instead of keeping rows."""
    out = Collected()
    last: Key | None = None
    for row in rows:
        if out.read == cap:
            out.resume = last
            return out
        out.read += 1
        if row.ok and accept(row):
            if limit is not None and out.count == limit:
                out.resume = last
                return out
            out.count += 1
            if limit is not None:
                out.rows.append(row)
        last = (row.sort, row.path)
    return out


def cut(got: Collected, kept: int, start: Key | None) -> Collected:
    """The page ended after its first `kept` rows (their values filled the page): the next
    resumes after the last one kept, and reads again what this one read beyond it; after
    `start` (where this page began; None: the beginning) when none was kept."""
    if kept >= len(got.rows):
        return got
    rows = got.rows[:kept]
    resume = (rows[-1].sort, rows[-1].path) if rows else start or START
    return Collected(rows, kept, resume, got.read)


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
