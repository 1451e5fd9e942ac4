"""What one maker may take of an organization's jobs (docs/jobs.md, "Running jobs"): a
share of the running jobs per maker and per project, the org admins' reserve, the pace of
creation; and how long ended jobs are kept ("Retention").

An attack from inside one organization found that a caller with update rights on one
device could take every running-job place of the org (jobs with a week's timeout and ten
retries on an offline device hold them for weeks), and make and cancel jobs in a loop
that the database kept for ever. Counts and codes only: no timing.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from edge.app import sweep_once
from edge.jobs import retention
from edge.kernel import clock
from storage import jobs as job_store
from tests.spies import calls_of
from tests.world import World

pytestmark = pytest.mark.world(jobs_tick_seconds=3600)
HOLD = {"timeout_seconds": 604800, "max_retries": 10}  # a week, ten times: held for weeks


def job_on(world: World, device: str, project: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"document": {"fw": "x"}, "targets": {"device_ids": [world.id(device)]}}
    if project:
        body["project_id"] = world.project_id
    return {**body, "policy": HOLD}


async def make(world: World, who: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    status, reply = await world.call(who, "POST", "/v2/jobs", json=body)
    return int(status), reply


async def made_until_refused(
    world: World, who: str, body: dict[str, Any], most: int
) -> tuple[list[str], dict[str, Any]]:
    """The jobs `who` made before the first refusal (at most `most`), and the refusal."""
    made: list[str] = []
    while len(made) < most:
        status, reply = await make(world, who, body)
        if status != 201:
            assert status == 409, reply
            return made, reply
        made.append(reply["job"]["id"])
    return made, {}


async def test_one_maker_takes_its_share_not_the_organizations(world: World) -> None:
    """With the defaults (100 per org, 10 per maker): a group-level maker stops at its
    share, and the org admin, the project admin and another maker still make jobs."""
    made, refused = await made_until_refused(
        world, "group_device_perms", job_on(world, "device_member"), 100
    )
    assert len(made) == 10 and "jobs_max_running_per_user" in refused["message"], refused
    for who, body in (
        ("org_admin", job_on(world, "device_loner")),
        ("project_admin", job_on(world, "device_member", project=True)),
        ("org_device_perms", job_on(world, "device_member")),
    ):
        status, reply = await make(world, who, body)
        assert status == 201, (who, reply)
    clock.advance(timedelta(days=13))  # the held jobs still run; the share still holds
    await world.site.services.job_scheduler.tick()
    status, _ = await make(world, "group_device_perms", job_on(world, "device_member"))
    assert status == 409
    path = f"/v2/jobs/{made[0]}/cancel"
    status, _ = await world.call("group_device_perms", "POST", path, json={})
    assert status == 200  # an ended job gives its place back
    status, reply = await make(world, "group_device_perms", job_on(world, "device_member"))
    assert status == 201, reply


@pytest.mark.world(jobs_max_running=5, jobs_admin_reserve=2, jobs_max_running_per_user=2)
async def test_the_org_admins_keep_their_reserve(world: World) -> None:
    """Others stop at jobs_max_running minus the reserve, whoever they are; org admins
    take the reserve, up to jobs_max_running."""
    body = job_on(world, "device_member")
    made, refused = await made_until_refused(world, "group_device_perms", body, 5)
    assert len(made) == 2 and "jobs_max_running_per_user" in refused["message"]
    status, _ = await make(world, "org_device_perms", body)
    assert status == 201  # 3 running: the others' last place
    for who in ("org_device_perms", "project_admin", "group_admin"):
        status, reply = await make(world, who, body)
        assert status == 409 and "jobs_admin_reserve" in reply["message"], (who, reply)
    made, refused = await made_until_refused(world, "org_admin", body, 5)
    assert len(made) == 2 and "5 jobs running" in refused["message"], refused
    status, reply = await make(world, "staff", body)  # staff signed in to the org
    assert status == 409 and "5 jobs running" in reply["message"]


@pytest.mark.world(jobs_max_running_per_project=2)
async def test_a_project_takes_its_share(world: World) -> None:
    """A project's jobs, whoever made them, stop at jobs_max_running_per_project; jobs
    outside the project and the org admin's are not held to it."""
    apollo = job_on(world, "device_member", project=True)
    for who in ("project_admin", "project_device_perms"):
        status, reply = await make(world, who, apollo)
        assert status == 201, (who, reply)
    for who in ("project_device_perms", "project_admin"):
        status, reply = await make(world, who, apollo)
        assert status == 409 and "jobs_max_running_per_project" in reply["message"], reply
    status, reply = await make(world, "group_device_perms", job_on(world, "device_member"))
    assert status == 201 and reply["job"].get("project_id") is None, reply
    status, reply = await make(world, "org_admin", apollo)
    assert status == 201, reply


@pytest.mark.world(jobs_create_per_hour=3)
async def test_a_maker_makes_at_most_jobs_create_per_hour(world: World) -> None:
    """Made and deleted jobs count (a make-and-delete loop is held too); a refused
    creation does not; Retry-After is when the hour's oldest leaves it; org admins are
    not held to the pace."""
    clock.freeze()
    status, _ = await make(world, "group_device_perms", job_on(world, "device_loner"))
    assert status == 404  # refused: no place used
    for _ in range(3):
        status, reply = await make(world, "group_device_perms", job_on(world, "device_member"))
        assert status == 201, reply
        path = f"/v2/jobs/{reply['job']['id']}?force=true"
        status, _ = await world.call("group_device_perms", "DELETE", path)
        assert status == 200
        clock.advance(timedelta(minutes=10))
    assert world.api is not None
    token = await world.token("group_device_perms")
    response = await world.api.client.post(
        "/v2/jobs",
        json=job_on(world, "device_member"),
        headers={"Authorization": f"Bearer {token}"},
    )
    reply = await response.json()
    assert response.status == 429 and "jobs_create_per_hour" in reply["message"], reply
    assert response.headers["Retry-After"] == str(3600 - 30 * 60)  # the first made, at 0
    clock.advance(timedelta(minutes=30) - timedelta(seconds=1))
    status, _ = await make(world, "group_device_perms", job_on(world, "device_member"))
    assert status == 429
    clock.advance(timedelta(seconds=1))
    status, reply = await make(world, "group_device_perms", job_on(world, "device_member"))
    assert status == 201, reply
    for _ in range(4):
        status, reply = await make(world, "org_admin", job_on(world, "device_loner"))
        assert status == 201, reply


@pytest.mark.world(jobs_create_per_hour=3)
async def test_concurrent_creations_of_one_maker_do_not_pass_the_pace_together(
    world: World,
) -> None:
    calls = [make(world, "group_device_perms", job_on(world, "device_member")) for _ in range(6)]
    statuses = sorted(status for status, _ in await asyncio.gather(*calls))
    assert statuses == [201, 201, 201, 429, 429, 429]


@pytest.mark.world(jobs_retention_days=30)
async def test_ended_jobs_go_after_jobs_retention_days(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hourly sweep deletes a job ended more than jobs_retention_days ago with its
    executions, a batch per transaction; a running job and one ended since stay."""
    services = world.site.services
    both = {
        "document": {},
        "targets": {"device_ids": [world.id("device_member"), world.id("device_loner")]},
    }
    ids = []
    for _ in range(3):
        status, reply = await make(world, "org_admin", both)
        assert status == 201, reply
        ids.append(reply["job"]["id"])
    old, running, recent = ids
    assert (await world.call("org_admin", "POST", f"/v2/jobs/{old}/cancel", json={}))[0] == 200
    clock.advance(timedelta(days=29))
    await sweep_once(services)
    assert (await world.call("org_admin", "GET", f"/v2/jobs/{old}"))[0] == 200
    assert (await world.call("org_admin", "POST", f"/v2/jobs/{recent}/cancel", json={}))[0] == 200
    clock.advance(timedelta(days=2))
    monkeypatch.setattr(retention, "EXECUTIONS_PER_BATCH", 1)
    batches = calls_of(monkeypatch, job_store, "purge_ended")
    await sweep_once(services)
    assert len(batches) == 3  # an execution, the other and the job, then nothing left
    status, _ = await world.call("org_admin", "GET", f"/v2/jobs/{old}")
    assert status == 404
    gone = services.db.read(lambda c: job_store.execution(c, old, world.id("device_member")))
    assert gone is None and services.db.read(lambda c: job_store.counts(c, old)) == {}
    status, listed = await world.call("org_admin", "GET", "/v2/jobs")
    assert sorted(j["id"] for j in listed["jobs"]) == sorted([running, recent]), listed
    clock.advance(timedelta(days=365))
    await sweep_once(services)
    status, listed = await world.call("org_admin", "GET", "/v2/jobs")
    assert [j["id"] for j in listed["jobs"]] == [running]  # running: never swept


async def test_make_and_cancel_in_a_loop_keeps_no_more_than_the_retention(world: World) -> None:
    """The attack's loop (make, cancel, again), at a small scale: what it made is gone
    once the retention period (the default, 30 days) is over."""
    body = {
        "document": {"blob": "y" * 1000},
        "targets": {"device_ids": [world.id("device_member")]},
    }
    for _ in range(5):
        status, reply = await make(world, "group_device_perms", body)
        assert status == 201, reply
        path = f"/v2/jobs/{reply['job']['id']}/cancel"
        assert (await world.call("group_device_perms", "POST", path, json={}))[0] == 200
    status, listed = await world.call("org_admin", "GET", "/v2/jobs?object_count=true&limit=1")
    assert listed["object_count"] == 5
    clock.advance(timedelta(days=31))
    await sweep_once(world.site.services)
    status, listed = await world.call("org_admin", "GET", "/v2/jobs?object_count=true&limit=1")
    assert listed["object_count"] == 0, listed
