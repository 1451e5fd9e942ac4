"""What the jobs room tells after a commit (docs/jobs.md): each device whose next job
changed gets `notify-next` on its own sessions (QoS 1), and each job whose executions
moved is told on the progress hook (`JobProgress`), which the live feed carries on.

Nothing here is told before the commit that makes it true; a notice lost to a crash is
sent again when the device subscribes or reconnects (edge/jobs/inbox.py).
"""

from __future__ import annotations

import logging
import zlib
from dataclasses import dataclass

from edge.devices.topics import Notify
from edge.jobs import topics, views
from edge.jobs.progress import Changes
from edge.kernel import clock
from edge.kernel.events import Hook
from storage import devices as device_store
from storage import jobs as store
from storage.database import Database
from storage.records import Device
from storage.rows import Tx

log = logging.getLogger("edge.jobs")
NOTHING = 0  # the mark of notify-next without an execution


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

    def tell(self, changes: Changes) -> None:
        for device_id in sorted(changes.devices):
            device = self._device(device_id)
            if device is not None and device.is_active:
                self.next_for(device)
        for job_id in sorted(changes.jobs):
            self._progress(job_id)

    def _device(self, device_id: str) -> Device | None:
        return self._db.read(lambda c: device_store.get(c, device_id))

    def next_for(self, device: Device, unless: int | None = None) -> int:
        """Publish the device's next execution (or `{}`) on its notify-next, unless it is
        the one `unless` marks (what this returned before); its mark."""
        body = self._db.read(lambda c: self.next_view(c, device.id))
        mark = (
            NOTHING if body is None else zlib.crc32(f"{body['job_id']}:{body['version']}".encode())
        )
        if self.notify is not None and mark != unless:
            payload = topics.notify_payload(body, clock.now_iso())
            self.notify(device.id, topics.notify_topic(device), payload)
        return mark

    def next_view(self, conn: Tx, device_id: str) -> views.Row | None:
        pending = store.of_device(conn, device_id, released_only=True)
        if not pending:
            return None
        job = store.get(conn, pending[0].job_id)
        return None if job is None else views.for_device(pending[0], job, self.url_of)

    def _progress(self, job_id: str) -> None:
        job = self._db.read(lambda c: store.get(c, job_id))
        if job is None:
            return
        counts = self._db.read(lambda c: store.counts(c, job_id))
        event = JobProgress(job.org_id, job.project_id, job.id, job.created_by, job.state, counts)
        self.progress.emit(event)
