"""The scheduler's tick on a real SQLite file (edge/jobs/scheduler.py `step`), without a
server: its work does not grow with the executions that are not due, with a job's
`device_ids`, nor with the number of running jobs, counted in SQLite's own
virtual-machine steps and pages read (counts, not times), and what it releases follows
the policy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import cast

import apsw
import pytest

from edge.jobs import scheduler
from edge.jobs.notices import Notices
from edge.jobs.rules import Policy
from edge.kernel import clock
from storage import jobs as store
from storage import migrate
from storage.database import Database
from storage.jobs import Job

STEPS_PER_CALL = 10  # the progress handler's granularity


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[apsw.Connection]:
    path = tmp_path / "edge.db"
    migrate.apply_pending(path)
    connection = apsw.Connection(str(path))
    yield connection
    connection.close()


def a_job(
    job_id: str, policy: Policy, device_ids: list[str] | None = None, reaches_admins: bool = True
) -> Job:
    now = clock.now_iso()
    return Job(
        id=job_id,
        org_id="org",
        project_id=None,
        description="",
        document={},
        targets={"device_ids": device_ids or []},
        target_group_id=None,
        target_project_id=None,
        target_tags=None,
        continuous=False,
        artifact_group_id=None,
        artifact_path=None,
        artifact_etag=None,
        artifact_size=None,
        artifact_sha256=None,
        policy=policy.as_row(),
        state="SCHEDULED",
        reason=None,
        window_start=now,
        window_released=0,
        created_date=now,
        created_by="someone",
        last_updated_date=now,
        completed_date=None,
        target_limit=None,
        reaches_admins=reaches_admins,
    )


def with_targets(
    conn: apsw.Connection, job_id: str, count: int, policy: Policy, reaches_admins: bool = True
) -> None:
    """A job over `count` devices, named in its targets as a `device_ids` job names them."""
    devices = [f"{job_id}-{i:06d}" for i in range(count)]
    job = a_job(job_id, policy, devices, reaches_admins)
    with conn:
        store.create(conn, job)
        store.add_executions(conn, job, devices, job.created_date)


def steps_of(conn: apsw.Connection, work: Callable[[], object]) -> int:
    """SQLite's virtual-machine steps of `work`, in one transaction, and the pages it read
    (a job's `targets` of 10,000 IDs is some 50 overflow pages, which no step counts)."""
    counted = [0]

    def count() -> bool:
        counted[0] += STEPS_PER_CALL
        return False  # go on

    conn.set_progress_handler(count, STEPS_PER_CALL)
    pages = (apsw.SQLITE_DBSTATUS_CACHE_HIT, apsw.SQLITE_DBSTATUS_CACHE_MISS)
    for page in pages:
        conn.status(page, True)
    with conn:
        work()
    conn.set_progress_handler(None)
    return counted[0] + sum(conn.status(page, True)[0] for page in pages)


def steps_of_a_tick(conn: apsw.Connection) -> int:
    return steps_of(conn, lambda: scheduler.step(conn, clock.now()))


def test_a_tick_costs_the_same_for_10_and_10000_targets(conn: apsw.Connection) -> None:
    """A running job at its in-progress limit: a tick finds nothing to release and nothing
    due. Its steps with 10 targets and with 10,000 (named in its `device_ids`, which the
    tick never reads) differ by less than the slack of SQLite's B-tree depth."""
    policy = Policy(max_in_progress=5, timeout_seconds=3600)
    with_targets(conn, "small", 10, policy)
    scheduler_step = steps_of_a_tick(conn)  # the first tick releases 5 of each
    assert scheduler_step > 0
    small = steps_of_a_tick(conn)
    with conn:
        conn.execute("DELETE FROM jobs")
    with_targets(conn, "large", 10_000, policy)
    steps_of_a_tick(conn)
    large = steps_of_a_tick(conn)
    assert large <= small * 1.25 + 200, (small, large)


def test_a_tick_asks_only_the_devices_it_releases_whether_they_are_admins(
    conn: apsw.Connection,
) -> None:
    """A job that does not reach admins asks, at release, whether each device it would
    release is one: a tick that releases one execution costs the same for 10 targets as
    for 10,000, the devices still queued are never asked."""
    policy = Policy(max_in_progress=1, timeout_seconds=3600)

    def releasing(job_id: str, count: int) -> int:
        with_targets(conn, job_id, count, policy, reaches_admins=False)
        steps = steps_of_a_tick(conn)
        assert store.active(conn, job_id) == 1
        with conn:
            conn.execute("DELETE FROM jobs")
        return steps

    small, large = releasing("small", 10), releasing("large", 10_000)
    assert large <= small * 1.25 + 200, (small, large)


def pages_written_by_a_tick(conn: apsw.Connection) -> int:
    """The pages a tick's transaction writes (to the WAL, at its commit)."""
    conn.status(apsw.SQLITE_DBSTATUS_CACHE_WRITE, True)
    with conn:
        scheduler.step(conn, clock.now())
    return int(conn.status(apsw.SQLITE_DBSTATUS_CACHE_WRITE, True)[0])


def test_a_releasing_tick_writes_the_same_for_10_and_10000_targets(
    conn: apsw.Connection,
) -> None:
    """A tick that releases one execution moves the job's rate window, a write of the
    job's row: it writes as many pages for a job over 10,000 device IDs as over 10, as
    the IDs are not in that row (migration 0034), whose overflow pages it would rewrite."""
    policy = Policy(max_in_progress=1, timeout_seconds=3600)

    def pages(job_id: str, count: int) -> int:
        with_targets(conn, job_id, count, policy)
        written = pages_written_by_a_tick(conn)
        with conn:
            conn.execute("DELETE FROM jobs")
        return written

    small, large = pages("small", 10), pages("large", 10_000)
    assert small > 0
    assert large <= small + 3, (small, large)  # + a deeper B-tree's pages, at most


def test_a_tick_costs_the_same_for_60_and_600_running_jobs(conn: apsw.Connection) -> None:
    """Each tick visits JOBS_PER_TICK jobs at most: with ten times the running jobs, its
    steps stay within the slack of the indexes' depth."""
    policy = Policy(max_in_progress=1, timeout_seconds=3600)

    def running(count: int) -> int:
        with conn:
            conn.execute("UPDATE jobs SET state = 'COMPLETED'")
        for n in range(count):
            with_targets(conn, f"r{count}.{n:04d}", 2, policy)
        for _ in range(count // scheduler.JOBS_PER_TICK + 1):
            steps_of_a_tick(conn)  # every job has released its one
        return steps_of_a_tick(conn)

    few, many = running(60), running(600)
    assert many <= few * 1.25 + 200, (few, many)


def test_ticks_visit_the_running_jobs_round_robin(
    conn: apsw.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three jobs a tick over seven: every job is visited once in three ticks, then the
    turn starts over."""
    monkeypatch.setattr(scheduler, "JOBS_PER_TICK", 3, raising=False)
    for n in range(7):
        with_targets(conn, f"job{n}", 3, Policy(max_per_minute=1))
    visits = []
    for _ in range(4):
        with conn:
            visits.append(
                sorted(d.split("-")[0] for d in scheduler.step(conn, clock.now()).devices)
            )
    assert visits[:3] == [["job0", "job1", "job2"], ["job3", "job4", "job5"], ["job6"]]
    assert visits[3] == []  # job0-job2 again: their minute's one is released


def test_the_tick_and_the_notices_never_read_a_jobs_targets(conn: apsw.Connection) -> None:
    """What SQLite reads, column by column (its authorizer, asked as each statement is
    prepared): `targets` holds up to jobs_max_targets device IDs, which neither a tick
    nor what notify-next tells needs."""
    read: set[tuple[str, str]] = set()

    def authorizer(operation: int, table: str | None, column: str | None, *_: object) -> int:
        if operation == apsw.SQLITE_READ and table and column:
            read.add((table, column))
        return apsw.SQLITE_OK

    conn.authorizer = authorizer
    notices = Notices(cast(Database, None), lambda job, execution: None)
    with_targets(conn, "job", 10, Policy(timeout_seconds=1))
    read.clear()
    clock.freeze()
    with conn:
        released = scheduler.step(conn, clock.now())
        assert notices.gather(conn, released).progress  # the devices' next, the job's progress
    clock.advance(timedelta(seconds=2))
    with conn:
        assert scheduler.step(conn, clock.now()).devices == released.devices  # timed out
    assert ("jobs", "state") in read and ("job_targets", "targets") not in read


def test_a_tick_releases_within_the_rate_and_the_in_progress_limit(conn: apsw.Connection) -> None:
    clock.freeze()
    with_targets(conn, "job", 20, Policy(max_per_minute=4, max_in_progress=3))
    with conn:
        first = scheduler.step(conn, clock.now())
    assert len(first.devices) == 3 and first.jobs == {"job"}
    with conn:
        assert scheduler.step(conn, clock.now()).devices == set()
        assert store.active(conn, "job") == 3
        job = store.get(conn, "job")
    assert job is not None and job.state == "IN_PROGRESS" and job.window_released == 3
    with conn:  # two finish: one more fits the minute's rate, not two
        for device in sorted(first.devices)[:2]:
            before = store.execution(conn, "job", device)
            assert before is not None
            store.move(conn, before, {"state": "SUCCEEDED", "deadline": None})
        assert len(scheduler.step(conn, clock.now()).devices) == 1
    clock.advance(timedelta(minutes=1))
    with conn:
        assert len(scheduler.step(conn, clock.now()).devices) == 1  # in progress: 3 again


def test_executions_are_released_in_the_order_the_job_lists_its_devices(
    conn: apsw.Connection,
) -> None:
    """The executions are written in one statement (a JSON array of the devices, not a
    row each: CPU per execution, #31), in the job's order, which is its queue's."""
    clock.freeze()
    devices = ["d-3", "d-1", "d-2", "d-0"]
    job = a_job("job", Policy(max_in_progress=1), devices)
    with conn:
        store.create(conn, job)
        store.add_executions(conn, job, devices, job.created_date)
        store.add_executions(conn, job, ["d-1", "d-9"], job.created_date)  # d-1 kept
    assert store.counts(conn, "job")["QUEUED"] == 5
    released = []
    for _ in range(5):
        with conn:
            (device,) = scheduler.step(conn, clock.now()).devices
            before = store.execution(conn, "job", device)
            assert before is not None and before.version == 1
            store.move(conn, before, {"state": "SUCCEEDED", "deadline": None})
        released.append(device)
    assert released == [*devices, "d-9"]


def test_policy_abort_rule() -> None:
    policy = replace(Policy(), abort_percent=20, abort_min_finished=5)
    assert not policy.should_abort(4, 4)  # too few finished to judge
    assert not policy.should_abort(5, 1)  # 20 %: not more than 20 %
    assert policy.should_abort(5, 2)
    assert not Policy().should_abort(100, 100)  # no abort rule
