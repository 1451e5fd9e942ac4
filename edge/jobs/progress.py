"""How executions end and what follows for their job, inside the write that ends them
(docs/jobs.md, "Rollout"): retries, the abort rule, completion. The scheduler, a device's
update and a cancel all go through here, so the rules hold whoever moves an execution.

What a transaction changed is gathered in a `Changes`: the devices whose next job may
have changed (told on notify-next after the commit) and the jobs whose progress moved
(told on the progress hook after the commit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from edge.jobs.rules import Policy, stored_policy
from storage import jobs as store
from storage.jobs import Execution, JobCore
from storage.rows import Tx

FAILED = ("FAILED", "REJECTED", "TIMED_OUT")
FINISHED = ("SUCCEEDED", *FAILED)
RETRIED = ("FAILED", "TIMED_OUT")  # a device that REJECTS a job is not asked again


@dataclass
class Changes:
    devices: set[str] = field(default_factory=set)
    jobs: set[str] = field(default_factory=set)
    # Devices whose own update ended their execution: the update's answer told them so,
    # so notify-next tells them only of a next execution, never that none is left.
    reported: set[str] = field(default_factory=set)

    def add(self, other: Changes) -> None:
        self.devices |= other.devices
        self.jobs |= other.jobs
        self.reported |= other.reported


def policy_of(job: JobCore) -> Policy:
    return stored_policy(job.policy)


def end(
    conn: Tx,
    job: JobCore,
    before: Execution,
    state: str,
    details: dict[str, Any],
    now: str,
    percent: int | None = None,
) -> Execution | None:
    """Move an unfinished execution to `state`: back to the queue instead when it failed
    or timed out with retries left and the job still runs. None when another writer
    moved it first (its version changed). Queued again, it is as if never released: its
    release and start times go (the scheduler sets them anew), so `released_date` shows
    whether it is released now."""
    retry = (
        state in RETRIED
        and job.state in store.RUNNING
        and before.attempts < policy_of(job).max_retries
    )
    if retry:
        changes: dict[str, Any] = {
            "state": "QUEUED",
            "released": False,
            "attempts": before.attempts + 1,
            "ready_date": now,
            "released_date": None,
            "started_date": None,
            "deadline": None,
            "progress": 0,
            "status_details": {**details, "retrying_after": state},
        }
    else:
        done = before.progress if percent is None else percent
        changes = {"state": state, "finished_date": now, "deadline": None}
        changes["status_details"] = details
        changes["progress"] = 100 if state == "SUCCEEDED" else done
    changes["last_updated_date"] = now
    return store.move(conn, before, changes)


def settle(conn: Tx, job_id: str, now: str) -> Changes:
    """After executions of a running job changed: abort it past its failure threshold
    (its unfinished executions are CANCELED), or complete it when nothing is left. The
    job is in the changes only when it ended here."""
    job = store.core(conn, job_id)
    if job is None or job.state not in store.RUNNING:
        return Changes()
    return follow(conn, job, store.counts(conn, job_id), now)


def follow(conn: Tx, job: JobCore, counts: dict[str, int], now: str) -> Changes:
    """`settle`, given the job as this transaction read it (nothing changed its row
    since) and its counts as they are now: a device's update reads the counts once, for
    this and for the progress it tells."""
    told = Changes()
    if job.state not in store.RUNNING:
        return told
    finished = sum(counts.get(s, 0) for s in FINISHED)
    failed = sum(counts.get(s, 0) for s in FAILED)
    if policy_of(job).should_abort(finished, failed):
        reason = f"{failed} of {finished} finished executions failed"
        store.finish(conn, job.id, "ABORTED", reason, now)
        told.jobs.add(job.id)
        details = {"reason": "job_aborted"}
        told.devices |= set(
            store.end_unfinished(conn, job.id, store.UNFINISHED, "CANCELED", details, now)
        )
        return told
    left = counts.get("QUEUED", 0) + counts.get("IN_PROGRESS", 0)
    if left == 0 and not job.continuous and job.state == "IN_PROGRESS":
        store.finish(conn, job.id, "COMPLETED", None, now)
        told.jobs.add(job.id)
    return told


def stop(conn: Tx, job: JobCore, state: str, reason: str, force: bool, now: str) -> Changes:
    """End a running job as CANCELED or ABORTED: its queued executions are CANCELED, and
    those in progress too with `force` (else they may still finish)."""
    told = Changes(jobs={job.id})
    if not store.finish(conn, job.id, state, reason, now):
        return told
    ending = store.UNFINISHED if force else ("QUEUED",)
    details = {"reason": "job_canceled" if state == "CANCELED" else "job_aborted"}
    told.devices |= set(store.end_unfinished(conn, job.id, ending, "CANCELED", details, now))
    return told


def artifact_gone(conn: Tx, job: JobCore, why: str, now: str) -> Changes:
    """The pinned file changed or went: the unfinished executions FAIL with that reason
    (no retry can help), and the job ends ABORTED saying so."""
    told = Changes(jobs={job.id})
    if not store.finish(conn, job.id, "ABORTED", why, now):
        return told
    details = {"reason": why}
    told.devices |= set(
        store.end_unfinished(conn, job.id, store.UNFINISHED, "FAILED", details, now)
    )
    return told
