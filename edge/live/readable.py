"""Whether an account may read a change now: the one decision every transport asks, per
subscriber and per change (the SSE streams here; the MQTT data topics call the same
`Readable.may_read` for each session they would deliver to).

A data change is readable where the account may read the entry's path (its group access and
`data_paths`, edge/data/service.py `may_read`), a file change where it may read the file's
path (`file_paths`, edge/files/rights.py), a device's presence or twin change where it may
read the device, a job's progress where it may read the job (edge/jobs/service.py). The
answers come from the permission engine's cache, which the access epoch replaces, so a grant
removed or narrowed counts from the next change on.

A stream sends its changes in batches (a resume's missed changes, what queued while it
wrote): `readable_of` opens each group's (and device's) rights once per batch, not once per
change, so a batch costs its groups and devices, and a caller who may read nothing pays no
more for the organization's changes than for one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from edge.kernel.principal import Principal
from edge.live.feed import Change
from edge.live.selection import under

PathRight = Callable[[Principal, str, str], bool]  # (who, group ID, path) -> may read
DeviceRight = Callable[[Principal, str], bool]  # (who, device ID) -> may read
PathReader = Callable[[str], bool]  # (path) -> may read, for one group already decided
GroupRight = Callable[[Principal, str], PathReader]  # (who, group ID) -> its paths' reader
JobRight = Callable[[Principal, str], bool]  # (who, job ID) -> may read


@dataclass(frozen=True)
class Readable:
    data: PathRight
    files: PathRight
    device: DeviceRight
    data_reader: GroupRight
    files_reader: GroupRight
    job: JobRight = lambda principal, job_id: False

    def may_read(self, principal: Principal, change: Change) -> bool:
        if change.org_id != principal.org_id:
            return False
        if change.kind == "data":
            return change.path is not None and self.data(principal, change.subject, change.path)
        if change.kind == "files":
            return change.path is not None and self.files(principal, change.subject, change.path)
        if change.kind == "jobs":
            return self.job(principal, change.subject)
        return self.device(principal, change.subject)

    def readable_of(
        self, principal: Principal, changes: Iterable[Change], prefix: str = "/"
    ) -> list[Change]:
        """The changes of one batch the account may read, as `may_read` decides each, its
        rights on each group and device looked up once for the batch. A cascade delete above
        `prefix` (the stream's path) that the account may not read at its top, but may at
        `prefix`, is told as a cascade delete of `prefix`: what it could read there went."""
        return _Batch(self, principal, prefix).readable(changes)


class _Batch:
    """One batch's decisions: a group's path reader and a device's answer, kept for the
    batch only (rights that change count from the next batch on)."""

    def __init__(self, rights: Readable, principal: Principal, prefix: str) -> None:
        self._rights = rights
        self._principal = principal
        self._prefix = prefix
        self._groups: dict[tuple[str, str], PathReader] = {}
        self._devices: dict[str, bool] = {}

    def readable(self, changes: Iterable[Change]) -> list[Change]:
        told: list[Change] = []
        for change in changes:
            if self._may_read(change):
                told.append(change)
            elif self._cascade_reaches_prefix(change):
                told.append(_narrowed(change, self._prefix))
        return told

    def _cascade_reaches_prefix(self, change: Change) -> bool:
        """A cascade delete above the prefix took what the account may read at it."""
        path, prefix = change.path, self._prefix
        if change.body.get("operation") != "delete_below" or path is None or path == prefix:
            return False
        if change.org_id != self._principal.org_id or not under(prefix, path):
            return False
        return self._reader(change.kind, change.subject)(prefix)

    def _may_read(self, change: Change) -> bool:
        if change.org_id != self._principal.org_id:
            return False
        if change.kind in ("data", "files"):
            path = change.path
            return path is not None and self._reader(change.kind, change.subject)(path)
        if change.kind == "jobs":
            return self._rights.job(self._principal, change.subject)
        return self._device(change.subject)

    def _device(self, device_id: str) -> bool:
        held = self._devices.get(device_id)
        if held is None:
            held = self._devices[device_id] = self._rights.device(self._principal, device_id)
        return held

    def _reader(self, kind: str, group_id: str) -> PathReader:
        reader = self._groups.get((kind, group_id))
        if reader is None:
            right = self._rights.data_reader if kind == "data" else self._rights.files_reader
            reader = self._groups[(kind, group_id)] = right(self._principal, group_id)
        return reader


def _narrowed(change: Change, prefix: str) -> Change:
    """The cascade delete as the account may hear it: of `prefix`, not of its top."""
    return replace(change, path=prefix, body={**change.body, "path": prefix})
