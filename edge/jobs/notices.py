"""What the jobs room tells after a commit (docs/jobs.md): each device whose next job
changed gets `notify-next` on its own sessions (QoS 1), and each job whose executions
moved is told on the progress hook (`JobProgress`), which the live feed carries on.

Nothing here is told before the commit that makes it true; a notice lost to a crash is
sent again when the device subscribes or reconnects (edge/jobs/inbox.py).
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from edge.devices.topics import Notify
from edge.jobs import topics, views
from edge.jobs.progress import Changes
from edge.kernel import clock
from edge.kernel.events import Hook
from storage import devices as device_store
from storage import jobs as store
from storage.database import Database
from storage.jobs import JobCore
from storage.records import Device
from storage.rows import Tx

log = logging.getLogger("edge.jobs")
NOTHING = 0  # the mark of notify-next without an execution
CHUNK = 200  # devices told per read transaction, the loop yielded between chunks
Jobs = dict[str, JobCore | None]


@dataclass(frozen=True)
class JobProgress:
    """A job whose state or counts changed, as they are after the commit."""

    org_id: str
    project_id: str | None
    job_id: str
    created_by: str
    state: str
    counts: dict[str, int]


class Notices:
    def __init__(self, db: Database, url_of: views.UrlOf) -> None:
        self._db = db
        self.url_of = url_of
        # How notify-next reaches a device's sessions; set by edge/app.py.
        self.notify: Notify | None = None
        self.progress: Hook[JobProgress] = Hook("jobs")

    async def tell(self, changes: Changes) -> None:
        """Tell every changed device its next execution, `CHUNK` devices per read (each
        job read once for the whole batch), yielding the loop between chunks so a release
        of thousands never holds it; then each changed job's progress."""
        devices = sorted(changes.devices)
        jobs: Jobs = {}
        for start in range(0, len(devices), CHUNK):
            for device, body in self._db.read(self._chunk(devices[start : start + CHUNK], jobs)):
                self._publish(device, body, None)
            await asyncio.sleep(0)
        for job_id in sorted(changes.jobs):
            self._progress(job_id)

    def _chunk(
        self, device_ids: list[str], jobs: Jobs
    ) -> Callable[[Tx], list[tuple[Device, views.Row | None]]]:
        """A read of the active devices among these, each with its next execution."""

        def read(conn: Tx) -> list[tuple[Device, views.Row | None]]:
            out = []
            for device_id in device_ids:
                device = device_store.get(conn, device_id)
                if device is not None and device.is_active:
                    out.append((device, self.next_view(conn, device_id, jobs)))
            return out

        return read

    def next_for(self, device: Device, unless: int | None = None) -> int:
        """Publish the device's next execution (or `{}`) on its notify-next, unless it is
        the one `unless` marks (what this returned before); its mark."""
        body = self._db.read(lambda c: self.next_view(c, device.id))
        return self._publish(device, body, unless)

    def _publish(self, device: Device, body: views.Row | None, unless: int | None) -> int:
        mark = (
            NOTHING if body is None else zlib.crc32(f"{body['job_id']}:{body['version']}".encode())
        )
        if self.notify is not None and mark != unless:
            payload = topics.notify_payload(body, clock.now_iso())
            self.notify(device.id, topics.notify_topic(device), payload)
        return mark

    def next_view(self, conn: Tx, device_id: str, jobs: Jobs | None = None) -> views.Row | None:
        """The view of the device's next released execution; `jobs` remembers the jobs
        read (without their targets) for the rest of a batch."""
        pending = store.of_device(conn, device_id, released_only=True)
        if not pending:
            return None
        memo: Jobs = {} if jobs is None else jobs
        job_id = pending[0].job_id
        if job_id not in memo:
            memo[job_id] = store.core(conn, job_id)
        job = memo[job_id]
        return None if job is None else views.for_device(pending[0], job, self.url_of)

    def _progress(self, job_id: str) -> None:
        def both(conn: Tx) -> tuple[JobCore | None, dict[str, int]]:
            return store.core(conn, job_id), store.counts(conn, job_id)

        job, counts = self._db.read(both)
        if job is None:
            return
        event = JobProgress(job.org_id, job.project_id, job.id, job.created_by, job.state, counts)
        self.progress.emit(event)
