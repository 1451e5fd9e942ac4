"""What the jobs room tells after a commit (docs/jobs.md): each device whose next job
changed gets `notify-next` on its own sessions (QoS 1), and each job whose executions
moved is told on the progress hook (`JobProgress`), which the live feed carries on.

Nothing here is told before the commit that makes it true; a notice lost to a crash is
sent again when the device subscribes or reconnects (edge/jobs/inbox.py). A write that
moves executions gathers what it will tell inside its own transaction (`gather`, on the
writer's thread), so a device's update or a tick costs the event loop no read of its own:
only a change of more than `CHUNK` devices (a release or a cancel of thousands) is read
after the commit, in chunks, the loop free between them.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from edge.devices.topics import Notify
from edge.jobs import topics, views
from edge.jobs.progress import Changes
from edge.kernel import clock
from edge.kernel.events import Hook
from storage import devices as device_store
from storage import jobs as store
from storage.database import Database
from storage.devices import Placement
from storage.jobs import JobCore
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


@dataclass
class Told:
    """What a commit tells, gathered in its transaction: the devices' next executions and
    the jobs' progress; the devices `later` are read after the commit, in chunks."""

    devices: list[tuple[Placement, views.Row | None]] = field(default_factory=list)
    progress: list[JobProgress] = field(default_factory=list)
    later: list[str] = field(default_factory=list)


@dataclass
class Known:
    """What the transaction that gathers has read already and not changed since: the
    devices by ID and the jobs (without targets), so `gather` does not read them again
    (a device's update reads its device and its job anyway)."""

    devices: dict[str, Placement] = field(default_factory=dict)
    jobs: Jobs = field(default_factory=dict)


class Notices:
    def __init__(self, db: Database, url_of: views.UrlOf) -> None:
        self._db = db
        self.url_of = url_of
        # How notify-next reaches a device's sessions; set by edge/app.py.
        self.notify: Notify | None = None
        self.progress: Hook[JobProgress] = Hook("jobs")

    async def tell(self, changes: Changes) -> None:
        """Tell, after a commit that did not `gather`, what it changed: each changed job's
        progress read in one read, every device in chunks."""
        events = self._db.read(lambda c: self._events(c, changes.jobs))
        await self.send(Told(progress=events, later=sorted(changes.devices)))

    def gather(self, conn: Tx, changes: Changes, known: Known | None = None) -> Told:
        """Inside the transaction that made `changes`: what to tell after its commit (see
        `send`), read on the writer's connection rather than the loop's."""
        seen = Known() if known is None else known
        devices = sorted(changes.devices)
        if len(devices) > CHUNK:
            return Told(progress=self._events(conn, changes.jobs, seen.jobs), later=devices)
        told = self._chunk(devices, seen.jobs, seen.devices)(conn)
        return Told(told, self._events(conn, changes.jobs, seen.jobs))

    async def send(self, told: Told) -> None:
        """After the commit: publish what `gather` found, read the devices it left."""
        for device, body in told.devices:
            self._publish(device, body, None)
        await self._tell_devices(told.later)
        for event in told.progress:
            self.progress.emit(event)

    async def _tell_devices(self, devices: list[str]) -> None:
        """Tell these devices their next execution, `CHUNK` devices per read (each job
        read once for the whole batch), yielding the loop between chunks so a release of
        thousands never holds it."""
        jobs: Jobs = {}
        for start in range(0, len(devices), CHUNK):
            for device, body in self._db.read(self._chunk(devices[start : start + CHUNK], jobs)):
                self._publish(device, body, None)
            await asyncio.sleep(0)

    def _chunk(
        self, device_ids: list[str], jobs: Jobs, devices: dict[str, Placement] | None = None
    ) -> Callable[[Tx], list[tuple[Placement, views.Row | None]]]:
        """A read of the active devices among these (those in `devices` already read),
        each with its next execution."""
        read_already = devices or {}

        def read(conn: Tx) -> list[tuple[Placement, views.Row | None]]:
            out = []
            for device_id in device_ids:
                device = read_already.get(device_id) or device_store.placement(conn, device_id)
                if device is not None and device.is_active:
                    out.append((device, self.next_view(conn, device_id, jobs)))
            return out

        return read

    def next_for(self, device_id: str, unless: int | None = None) -> int | None:
        """Publish the device's next execution (or `{}`) on its notify-next, unless it is
        the one `unless` marks (what this returned before); its mark, or None when the
        device is no longer active (one read for both)."""
        found = self._db.read(self._chunk([device_id], {}))
        if not found:
            return None
        device, body = found[0]
        return self._publish(device, body, unless)

    def _publish(self, device: Placement, body: views.Row | None, unless: int | None) -> int:
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

    def _events(self, conn: Tx, job_ids: set[str], jobs: Jobs | None = None) -> list[JobProgress]:
        """Each job's progress as `conn` sees it (the jobs deleted meanwhile left out);
        `jobs` holds those read already as they are."""
        memo: Jobs = {} if jobs is None else jobs
        events = []
        for job_id in sorted(job_ids):
            if job_id not in memo:
                memo[job_id] = store.core(conn, job_id)
            job = memo[job_id]
            if job is not None:
                counts = store.counts(conn, job_id)
                events.append(
                    JobProgress(
                        job.org_id, job.project_id, job.id, job.created_by, job.state, counts
                    )
                )
        return events
