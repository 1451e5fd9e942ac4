"""Storage quotas: the bytes one group's files may hold, and all files of the installation
(both optional, from the configuration). Parts waiting for their upload to complete count
too, so many unfinished uploads cannot fill the disk past a quota.

Two checks: before an upload's bytes are read (the room left caps the stream, and a
Content-Length past it is refused at once) and, authoritative, inside the transaction that
records the part or the file, so concurrent uploads cannot pass a quota together.
"""

from __future__ import annotations

from dataclasses import dataclass

from edge.kernel.errors import TooLarge
from storage import file_uploads, files
from storage.rows import Tx


class QuotaExceeded(TooLarge):
    def __init__(self, scope: str, limit: int) -> None:
        super().__init__(f"Storage quota exceeded: {scope} may hold at most {limit} bytes of files")


@dataclass(frozen=True)
class Room:
    """Bytes an upload may still add, and the error should it go past them."""

    bytes: int
    error: QuotaExceeded


@dataclass(frozen=True)
class Quotas:
    group_limit: int | None = None
    total_limit: int | None = None

    def room(self, conn: Tx, group_id: str) -> Room | None:
        """What the group may still add under the tighter quota (None: no quota applies)."""
        rooms = []
        if self.group_limit is not None:
            left = self.group_limit - self._used(conn, group_id)
            rooms.append(Room(max(0, left), QuotaExceeded("a group", self.group_limit)))
        if self.total_limit is not None:
            left = self.total_limit - self._used(conn, None)
            rooms.append(Room(max(0, left), QuotaExceeded("this installation", self.total_limit)))
        return min(rooms, key=lambda r: r.bytes) if rooms else None

    def check(self, conn: Tx, group_id: str) -> None:
        """Inside the write that added bytes: refuse (and roll back) past a quota."""
        if self.group_limit is not None and self._used(conn, group_id) > self.group_limit:
            raise QuotaExceeded("a group", self.group_limit)
        if self.total_limit is not None and self._used(conn, None) > self.total_limit:
            raise QuotaExceeded("this installation", self.total_limit)

    @staticmethod
    def _used(conn: Tx, group_id: str | None) -> int:
        held = files.usage(conn, group_id or files.TOTAL)
        return held + file_uploads.pending_bytes(conn, group_id)
