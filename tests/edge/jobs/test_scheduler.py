"""The scheduler's tick on a real SQLite file (edge/jobs/scheduler.py `step`), without a
server: its work does not grow with the executions that are not due, counted in SQLite's
own virtual-machine steps (a count, not a time), and what it releases follows the policy.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import apsw
import pytest

from edge.jobs import scheduler
from edge.jobs.rules import Policy
from edge.kernel import clock
from storage import jobs as store
from storage import migrate
from storage.jobs import Job

STEPS_PER_CALL = 10  # the progress handler's granularity


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[apsw.Connection]:
    path = tmp_path / "edge.db"
    migrate.apply_pending(path)
    connection = apsw.Connection(str(path))
    yield connection
    connection.close()


def a_job(job_id: str, policy: Policy) -> Job:
    now = clock.now_iso()
    return Job(
        id=job_id,
        org_id="org",
        project_id=None,
        description="",
        document={},
        targets={"device_ids": []},
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
    )


def with_targets(conn: apsw.Connection, job_id: str, count: int, policy: Policy) -> None:
    job = a_job(job_id, policy)
    with conn:
        store.create(conn, job)
        store.add_executions(conn, job, [f"d{i:06d}" for i in range(count)], job.created_date)


def steps_of_a_tick(conn: apsw.Connection) -> int:
    counted = [0]

    def count() -> bool:
        counted[0] += STEPS_PER_CALL
        return False  # go on

    conn.set_progress_handler(count, STEPS_PER_CALL)
    with conn:
        scheduler.step(conn, clock.now())
    conn.set_progress_handler(None)
    return counted[0]


def test_a_tick_costs_the_same_for_10_and_10000_targets(conn: apsw.Connection) -> None:
    """Two running jobs at their in-progress limit: a tick finds nothing to release and
    nothing due. Its steps with 10 targets each and with 10,000 each differ by less than
    the slack of SQLite's B-tree depth."""
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


def test_policy_abort_rule() -> None:
    policy = replace(Policy(), abort_percent=20, abort_min_finished=5)
    assert not policy.should_abort(4, 4)  # too few finished to judge
    assert not policy.should_abort(5, 1)  # 20 %: not more than 20 %
    assert policy.should_abort(5, 2)
    assert not Policy().should_abort(100, 100)  # no abort rule
