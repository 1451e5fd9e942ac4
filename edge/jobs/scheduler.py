"""The rollout scheduler (docs/jobs.md, "Rollout"): each tick, in one write transaction,

- for each running job of a bounded round-robin batch (`JOBS_PER_TICK`, from where the
  last tick stopped: storage/jobs.py `running`): end it if its artifact is no longer the
  one pinned; else release the next executions in queue order, as many as its
  rate window (`max_per_minute`) and `max_in_progress` leave room for, each with its
  deadline (but end REMOVED, unreleased, those of org-admin devices when the job's maker
  was not an org admin); and complete or abort it by edge/jobs/progress.py;
- end the released executions past their deadline (TIMED_OUT, or back to the queue while
  retries are left).

Every read goes through a partial index over what is due (storage/jobs.py), and a job is
read without its targets (`JobCore`), so a tick costs the same for a job over 10 devices
as over 10,000, and for 50 running jobs as for 5,000 (each job then waits a few more
ticks for its turn). Wake-ups (a job was made) that come within `WAKE_GAP` of the last
tick are one tick, however many POSTs asked. The state is all in SQLite and
each tick is one transaction: after a restart or a SIGKILL, the next tick starts from
what was committed, so no execution is released twice or lost. The devices released are
told on notify-next after the commit (what to tell them is read in the tick's own
transaction: edge/jobs/notices.py `gather`). `tick` (and `step`, the transaction's work) is
the seam a benchmark times.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime, timedelta

from edge.jobs import artifacts, progress
from edge.jobs.notices import Notices, Told
from edge.jobs.progress import Changes
from edge.kernel import clock
from storage import jobs as store
from storage.database import Database
from storage.jobs import JobCore
from storage.rows import Tx

log = logging.getLogger("edge.jobs")
BATCH = 500  # executions released, or timed out, per job and tick at most
JOBS_PER_TICK = 50  # running jobs visited per tick, round-robin
WAKE_GAP = 0.25  # seconds: wake-ups sooner than this after a tick's start wait for it
WINDOW = timedelta(minutes=1)
# status_details.reason of an execution ended unreleased: its device is an org admin and
# the job's maker was not one, so may not update it (docs/jobs.md, "Who may").
OUT_OF_REACH = "device_is_admin"


class Scheduler:
    def __init__(self, db: Database, notices: Notices, tick_seconds: float) -> None:
        self._db = db
        self._notices = notices
        self.tick_seconds = tick_seconds
        self._woken = asyncio.Event()

    def wake(self) -> None:
        """Tick now rather than at the next interval (a job was made)."""
        self._woken.set()

    async def run(self, stop: asyncio.Event) -> None:
        """Tick until asked to stop; a failed tick is logged and the next one tries again."""
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            self._woken.clear()  # before the tick: a job made during it wakes the next
            started = loop.time()
            try:
                await self.tick()
            except Exception:
                log.exception("jobs: a scheduler tick failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_first(stop, self._woken), self.tick_seconds)
            rest = WAKE_GAP - (loop.time() - started)  # a burst of wake-ups: one tick
            if rest > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), rest)

    async def tick(self) -> Changes:
        now = clock.now()

        def write(conn: Tx) -> tuple[Changes, Told]:
            changes = step(conn, now)
            return changes, self._notices.gather(conn, changes)

        changes, told = await self._db.write(write)
        await self._notices.send(told)
        return changes


def step(conn: Tx, now: datetime) -> Changes:
    """One tick's work, inside its transaction (what a benchmark measures per tick)."""
    changes = Changes()
    for job in store.running(conn, JOBS_PER_TICK):
        changes.add(_job(conn, job, now))
    changes.add(_timeouts(conn, clock.iso(now)))
    return changes


def _job(conn: Tx, job: JobCore, now: datetime) -> Changes:
    at = clock.iso(now)
    why = artifacts.changed(conn, job)
    if why is not None:
        return progress.artifact_gone(conn, job, why, at)
    released, refused = _release(conn, job, now)
    changes = progress.settle(conn, job.id, at)
    changes.devices |= set(released)
    if released or refused or job.state == "SCHEDULED":
        changes.jobs.add(job.id)
    return changes


def _release(conn: Tx, job: JobCore, now: datetime) -> tuple[list[str], bool]:
    """Release what the job's limits leave room for; move the window and the job's state.
    A device the job may not reach (`store.waiting`) is not released its execution, which
    ends REMOVED instead (`OUT_OF_REACH`). The devices released, and whether any was
    refused."""
    policy = progress.policy_of(job)
    at = clock.iso(now)
    start, used = job.window_start, job.window_released
    if now - clock.parse(start) >= WINDOW:
        start, used = at, 0
    room = BATCH
    if policy.max_per_minute is not None:
        room = min(room, policy.max_per_minute - used)
    if policy.max_in_progress is not None:
        room = min(room, policy.max_in_progress - store.active(conn, job.id))
    due = store.waiting(conn, job, room) if room > 0 else []
    refused = [w.device_id for w in due if w.out_of_reach]
    for device in refused:
        store.refuse(conn, job.id, device, OUT_OF_REACH, at)
    deadline = clock.iso(now + timedelta(seconds=policy.timeout_seconds))
    devices = [w.device_id for w in due if not w.out_of_reach]
    released = [d for d in devices if store.release(conn, job.id, d, at, deadline)]
    changes: dict[str, object] = {}
    if (start, used + len(released)) != (job.window_start, job.window_released):
        changes.update(window_start=start, window_released=used + len(released))
    if job.state == "SCHEDULED":
        changes["state"] = "IN_PROGRESS"
    if changes:
        store.update(conn, job.id, {**changes, "last_updated_date": at})
    return released, bool(refused)


def _timeouts(conn: Tx, now: str) -> Changes:
    """Released executions past their deadline: TIMED_OUT, or queued again to retry."""
    changes = Changes()
    jobs: dict[str, JobCore | None] = {}  # each job read once per tick
    for execution in store.due(conn, now, BATCH):
        if execution.job_id not in jobs:
            jobs[execution.job_id] = store.core(conn, execution.job_id)
        job = jobs[execution.job_id]
        if job is None:
            continue
        progress.end(conn, job, execution, "TIMED_OUT", {"reason": "timed_out"}, now)
        changes.devices.add(execution.device_id)
        changes.jobs.add(job.id)
    for job_id in sorted(changes.jobs):
        changes.add(progress.settle(conn, job_id, now))
    return changes


async def _first(stop: asyncio.Event, woken: asyncio.Event) -> None:
    """Return when either event is set."""
    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(woken.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
