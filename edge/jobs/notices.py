"""What the jobs room tells after a commit (docs/jobs.md): each device whose next job
changed gets `notify-next` on its own sessions (QoS 1), and each job whose executions
moved is told on the progress hook (`JobProgress`), which the live feed carries on.

A notice carries something new or is not sent: a device is told when work is released
to it, and when the server ends or takes back an execution it was offered (a timeout, a
retry, a cancel, an abort); an execution ended before it was released is no news to its
device (it never heard of it), and a device whose own update ended its execution learnt
that from the update's answer, so it is told only of a next execution, never `{}`.

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
from collections.abc import Callable, Set
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
from storage.jobs import Execution, JobCore
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
    the jobs' progress; the devices `later` are read after the commit, in chunks (those
    `quiet` told only of a next execution)."""

    devices: list[tuple[Placement, views.Row | None]] = field(default_factory=list)
    progress: list[JobProgress] = field(default_factory=list)
    later: list[str] = field(default_factory=list)
    quiet: set[str] = field(default_factory=set)


@dataclass
class Known:
    """What the transaction that gathers has read already and not changed since: the
    devices by ID, the jobs (without targets) and their counts, so `gather` does not
    read them again (a device's update reads its device, its job, and the job's counts
    to settle it, anyway)."""

    devices: dict[str, Placement] = field(default_factory=dict)
    jobs: Jobs = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)


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
        events = self._db.read(lambda c: self._events(c, changes.jobs, Known()))
        later = sorted(changes.devices | changes.reported)
        await self.send(Told(progress=events, later=later, quiet=_quiet(changes)))

    def gather(self, conn: Tx, changes: Changes, known: Known | None = None) -> Told:
        """Inside the transaction that made `changes`: what to tell after its commit (see
        `send`), read on the writer's connection rather than the loop's."""
        seen = Known() if known is None else known
        devices, quiet = sorted(changes.devices | changes.reported), _quiet(changes)
        events = self._events(conn, changes.jobs, seen)
        if len(devices) > CHUNK:
            return Told(progress=events, later=devices, quiet=quiet)
        return Told(self._chunk(devices, seen.jobs, quiet, seen.devices)(conn), events)

    async def send(self, told: Told) -> None:
        """After the commit: publish what `gather` found, read the devices it left."""
        for device, body in told.devices:
            self._publish(device, body, None)
        await self._tell_devices(told.later, told.quiet)
        for event in told.progress:
            self.progress.emit(event)

    async def _tell_devices(self, devices: list[str], quiet: set[str]) -> None:
        """Tell these devices their next execution, `CHUNK` devices per read (each job
        read once for the whole batch), yielding the loop between chunks so a release of
        thousands never holds it."""
        jobs: Jobs = {}
        for start in range(0, len(devices), CHUNK):
            chunk = devices[start : start + CHUNK]
            for device, body in self._db.read(self._chunk(chunk, jobs, quiet)):
                self._publish(device, body, None)
            await asyncio.sleep(0)

    def _chunk(
        self,
        device_ids: list[str],
        jobs: Jobs,
        quiet: Set[str] = frozenset(),
        devices: dict[str, Placement] | None = None,
    ) -> Callable[[Tx], list[tuple[Placement, views.Row | None]]]:
        """A read of the active devices among these (those in `devices` already read),
        each with its next execution; those `quiet` only when they have one."""
        read_already = devices or {}

        def read(conn: Tx) -> list[tuple[Placement, views.Row | None]]:
            out = []
            for device_id in device_ids:
                device = read_already.get(device_id) or device_store.placement(conn, device_id)
                if device is None or not device.is_active:
                    continue
                execution = store.next_released(conn, device_id)
                body = None if execution is None else self._view(conn, execution, jobs)
                if body is not None or device_id not in quiet:
                    out.append((device, body))
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

    def _view(self, conn: Tx, execution: Execution, jobs: Jobs) -> views.Row | None:
        """What notify-next carries of a released execution; `jobs` remembers the jobs
        read (without their targets) for the rest of a batch."""
        job_id = execution.job_id
        if job_id not in jobs:
            jobs[job_id] = store.core(conn, job_id)
        job = jobs[job_id]
        return None if job is None else views.for_device(execution, job, self.url_of)

    def _events(self, conn: Tx, job_ids: set[str], known: Known) -> list[JobProgress]:
        """Each job's progress as `conn` sees it (the jobs deleted meanwhile left out);
        `known` holds the jobs and counts read already as they are."""
        events = []
        for job_id in sorted(job_ids):
            if job_id not in known.jobs:
                known.jobs[job_id] = store.core(conn, job_id)
            job = known.jobs[job_id]
            if job is not None:
                counts = known.counts.get(job_id)
                if counts is None:
                    counts = store.counts(conn, job_id)
                events.append(
                    JobProgress(
                        job.org_id, job.project_id, job.id, job.created_by, job.state, counts
                    )
                )
        return events


def _quiet(changes: Changes) -> set[str]:
    """The devices told only of a next execution: those whose own update ended theirs
    (and nothing else changed their work)."""
    return changes.reported - changes.devices
