"""What one stream asks for: which kinds of change, in which group and under which path prefix
(data, files), of which device (presence, twins); job progress when neither a group nor a
device is asked for. A change outside the selection is never queued for the stream; a change
inside it is still told only if the account may read it (`readable.py`), decided when it is
sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from edge.live.feed import KINDS, Change

GROUP_KINDS = frozenset({"data", "files"})
DEVICE_KINDS = frozenset({"presence", "twins"})
JOBS = "jobs"


@dataclass(frozen=True)
class Selection:
    org_id: str
    kinds: frozenset[str] = frozenset(KINDS)
    group_id: str | None = None
    prefix: str = "/"
    device_id: str | None = None

    def matches(self, change: Change) -> bool:
        if change.kind not in self.kinds or change.org_id != self.org_id:
            return False
        if change.kind in GROUP_KINDS:
            return self._in_group(change)
        if change.kind == JOBS:  # a job's progress: not of one group or device
            return self.group_id is None and self.device_id is None
        return self.device_id is None or change.subject == self.device_id

    def _in_group(self, change: Change) -> bool:
        if self.group_id is not None and change.subject != self.group_id:
            return False
        assert change.path is not None
        if under(change.path, self.prefix):
            return True
        # a subtree deleted above the prefix took the entries under it too
        return change.body.get("operation") == "delete_below" and under(self.prefix, change.path)


def under(path: str, prefix: str) -> bool:
    """Whether `path` is `prefix` or below it (`/a/b` is under `/a`, `/ab` is not)."""
    if prefix == "/" or path == prefix:
        return True
    return path.startswith(prefix.rstrip("/") + "/")
