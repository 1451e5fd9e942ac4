"""Whether an account may read a change now: the one decision every transport asks, per
subscriber and per change (the SSE streams here; the MQTT data topics call the same
`Readable.may_read` for each session they would deliver to).

A data change is readable where the account may read the entry's path (its group access
and `data_paths`, edge/data/service.py `may_read`), a file change where it may read the
file's path (`file_paths`, edge/files/rights.py), a device's presence or twin change where
it may read the device. The answers come from the permission engine's cache, which the
access epoch replaces, so a grant removed or narrowed counts from the next change on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from edge.kernel.principal import Principal
from edge.live.feed import Change

PathRight = Callable[[Principal, str, str], bool]  # (who, group ID, path) -> may read
DeviceRight = Callable[[Principal, str], bool]  # (who, device ID) -> may read


@dataclass(frozen=True)
class Readable:
    data: PathRight
    files: PathRight
    device: DeviceRight

    def may_read(self, principal: Principal, change: Change) -> bool:
        if change.org_id != principal.org_id:
            return False
        if change.kind == "data":
            return change.path is not None and self.data(principal, change.subject, change.path)
        if change.kind == "files":
            return change.path is not None and self.files(principal, change.subject, change.path)
        return self.device(principal, change.subject)
