"""Who may make, read and end rollout jobs (docs/jobs.md, "Who may"): role-by-role tables
over every caller of the world (tests/world.py), denials beside grants.

- create: those who may update every target device (the device table's UPDATE row for
  device_member), and read the artifact; never a device;
- read, list, cancel, delete: org admins, admins of the job's project, its creator; a 404
  for everyone else of the org and for another org; a 403 for a device;
- a device's executions (GET /v2/devices/{id}/executions): people who may read the device
  (else 404), each seeing the executions of the jobs it may list (none: an empty list).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.test_devices import READ as DEVICE_READ
from tests.api.test_devices import UPDATE
from tests.world import CALLERS, DEVICES, World

pytestmark = pytest.mark.world(jobs_tick_seconds=3600)


def _create(who: str) -> int:
    if who == "anonymous":
        return 401
    if who in DEVICES:
        return 403  # devices take part in jobs, they do not make them
    status = UPDATE[who][0]  # device_member
    return 201 if status == 200 else status


CREATE = {who: _create(who) for who in CALLERS}
READERS = {"staff": 200, "org_admin": 200, "project_admin": 200, "role_admin": 200}
READ = {
    who: READERS.get(who, 401 if who == "anonymous" else 403 if who in DEVICES else 404)
    for who in CALLERS
}
READ["staff_unscoped"] = 403  # jobs live in an organization


async def apollo_job(world: World, who: str = "org_admin", project: bool = True) -> dict[str, Any]:
    body = {"document": {"fw": "2.0"}, "targets": {"device_ids": [world.id("device_member")]}}
    if project:  # filed in Apollo, which only those who know it may name
        body["project_id"] = world.project_id
    status, reply = await world.call(who, "POST", "/v2/jobs", json=body)
    assert status == 201, reply
    return reply["job"]


@pytest.mark.parametrize(("who", "expected"), sorted(CREATE.items()))
async def test_create_by_role(world: World, who: str, expected: int) -> None:
    body = {"document": {}, "targets": {"device_ids": [world.id("device_member")]}}
    status, reply = await world.call(who, "POST", "/v2/jobs", json=body)
    assert status == expected, reply


@pytest.mark.parametrize(("who", "expected"), sorted(READ.items()))
async def test_read_by_role(world: World, who: str, expected: int) -> None:
    job = await apollo_job(world)
    for path in (f"/v2/jobs/{job['id']}", f"/v2/jobs/{job['id']}/executions"):
        status, reply = await world.call(who, "GET", path)
        assert status == expected, (path, reply)
    status, reply = await world.call(who, "GET", "/v2/jobs")
    if expected == 404:
        assert status == 200 and reply["jobs"] == [], reply
    elif expected == 200:
        assert [j["id"] for j in reply["jobs"]] == [job["id"]]
    else:
        assert status == expected, reply


@pytest.mark.parametrize(("who", "expected"), sorted(READ.items()))
async def test_cancel_and_delete_by_role(world: World, who: str, expected: int) -> None:
    job = await apollo_job(world)
    path = f"/v2/jobs/{job['id']}"
    status, reply = await world.call(who, "POST", f"{path}/cancel", json={"force": True})
    assert status == expected, reply
    status, reply = await world.call(who, "DELETE", f"{path}?force=true")
    assert status == expected, reply


async def test_the_creator_reads_its_job_and_a_bystander_does_not(world: World) -> None:
    job = await apollo_job(world, "group_admin", project=False)  # Ward's admin: not Apollo's
    status, reply = await world.call("group_admin", "GET", f"/v2/jobs/{job['id']}")
    assert status == 200 and reply["job"]["created_by"] == world.id("group_admin")
    status, _ = await world.call("group_device_perms", "GET", f"/v2/jobs/{job['id']}")
    assert status == 404
    status, reply = await world.call("group_admin", "GET", "/v2/jobs")
    assert [j["id"] for j in reply["jobs"]] == [job["id"]]


async def test_a_group_job_needs_rights_over_every_member(world: World) -> None:
    """Ward holds device_boss, an org admin, which a group admin may not update."""
    body = {"document": {}, "targets": {"group_id": world.org_group_id}}
    status, reply = await world.call("group_admin", "POST", "/v2/jobs", json=body)
    assert status == 403 and world.id("device_boss") in reply["message"], reply
    status, reply = await world.call("org_admin", "POST", "/v2/jobs", json=body)
    assert status == 201 and reply["job"]["counts"]["QUEUED"] == 2, reply


async def test_the_owner_makes_jobs_where_owners_are_admins(world: World) -> None:
    body = {"document": {}, "targets": {"device_ids": [world.id("device_member")]}}
    status, _ = await world.call("owner", "POST", "/v2/jobs", json=body)
    assert status == 403
    setting = {"device_owners_have_admin_access": True}
    status, reply = await world.call(
        "org_admin", "PATCH", f"/v2/projects/{world.project_id}", json=setting
    )
    assert status == 200, reply
    status, reply = await world.call("owner", "POST", "/v2/jobs", json=body)
    assert status == 201, reply


@pytest.mark.parametrize("device", ["device_member", "device_loner", "device_boss"])
async def test_a_devices_own_job_routes_are_its_own(world: World, device: str) -> None:
    job = await apollo_job(world)
    await world.site.services.job_scheduler.tick()  # released to device_member
    path = f"/v2/devices/{world.id('device_member')}/jobs"
    status, _ = await world.call(device, "GET", path)
    assert status == {"device_member": 200, "device_loner": 404, "device_boss": 403}[device]
    status, _ = await world.call("org_admin", "GET", path)  # people read /v2/jobs/...
    assert status == 403
    body = {"state": "SUCCEEDED"}
    status, _ = await world.call(device, "PATCH", f"{path}/{job['id']}", json=body)
    assert status == {"device_member": 200, "device_loner": 404, "device_boss": 403}[device]


def _device_list(who: str) -> tuple[int, bool]:
    """GET /v2/devices/{device_member}/executions: (status, whether Apollo's job shows).
    People who may read the device; those of them who may not list the job see none."""
    if who in DEVICES:
        return 403, False  # a device reads its own through /v2/devices/{id}/jobs
    status = DEVICE_READ[who][0]  # device_member
    return status, status == 200 and READ[who] == 200


DEVICE_LIST = {who: _device_list(who) for who in CALLERS}


@pytest.mark.parametrize(("who", "expected"), sorted(DEVICE_LIST.items()))
async def test_a_devices_executions_by_role(
    world: World, who: str, expected: tuple[int, bool]
) -> None:
    job = await apollo_job(world)
    path = f"/v2/devices/{world.id('device_member')}/executions"
    status, reply = await world.call(who, "GET", path)
    assert status == expected[0], reply
    if status == 200:
        shown = [e["job_id"] for e in reply["executions"]]
        assert shown == ([job["id"]] if expected[1] else []), reply


async def test_the_creator_lists_its_jobs_on_the_device(world: World) -> None:
    """Ward's admin reads device_member but is no admin of Apollo: it sees the executions
    of the job it made, not those of Apollo's job."""
    apollo = await apollo_job(world)
    own = await apollo_job(world, "group_admin", project=False)
    path = f"/v2/devices/{world.id('device_member')}/executions"
    status, reply = await world.call("group_admin", "GET", path)
    assert status == 200 and [e["job_id"] for e in reply["executions"]] == [own["id"]], reply
    status, reply = await world.call("org_admin", "GET", path)
    assert status == 200 and {e["job_id"] for e in reply["executions"]} == {apollo["id"], own["id"]}
