"""Who may make, read and end rollout jobs (docs/jobs.md, "Who may"): role-by-role tables
over every caller of the world (tests/world.py), denials beside grants.

- create: those who may update every target device (the device table's UPDATE row for
  device_member), and read the artifact; never a device;
- read, list, cancel, delete: org admins, admins of the job's project, its creator while
  it may still update every target device (whatever the kind of target); its creator
  cancels it while it runs in any case; a 404 for everyone else of the org and for
  another org; a 403 for a device;
- a project session: that project's jobs alone, and jobs made there are of it;
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


# -- makers who are no admins (#31): what creation allowed, reading and ending allow ------
async def made_by(world: World, who: str, targets: dict[str, Any], **more: Any) -> str:
    body = {"document": {"fw": "2"}, "targets": targets, **more}
    status, reply = await world.call(who, "POST", "/v2/jobs", json=body)
    assert status == 201, reply
    return str(reply["job"]["id"])


async def pumps(world: World, device_id: str) -> str:
    """A new group with one member device (Ward holds device_boss, whom only org admins
    may update), over whose devices group_device_perms holds every device permission."""
    status, reply = await world.call("org_admin", "POST", "/v2/groups", json={"name": "Pumps"})
    assert status == 201, reply
    group_id = str(reply["group"]["id"])
    perms = {"can_create": True, "can_read": True, "can_update": True, "can_delete": True}
    grants = ((device_id, {}), (world.id("group_device_perms"), {"device_permissions": perms}))
    for grantee, more in grants:
        path = f"/v2/groups/{group_id}/access/{grantee}"
        status, reply = await world.call("org_admin", "POST", path, json={"can_read": True, **more})
        assert status == 201, reply
    return group_id


async def reads_and_cancels(
    world: World, maker: str, job_id: str, bystander: str
) -> dict[tuple[str, str], Any]:
    """What the maker and the bystander get reading the job and its executions, cancelling
    it (the state the maker's cancel leaves) and deleting it, in that order."""
    path = f"/v2/jobs/{job_id}"
    seen: dict[tuple[str, str], Any] = {}
    for who, role in ((bystander, "bystander"), (maker, "maker")):
        seen[role, "GET"] = (await world.call(who, "GET", path))[0]
        seen[role, "GET executions"] = (await world.call(who, "GET", f"{path}/executions"))[0]
    for who, role in ((bystander, "bystander"), (maker, "maker")):
        status, reply = await world.call(who, "POST", f"{path}/cancel", json={"force": True})
        seen[role, "cancel"] = (status, reply["job"]["state"] if status == 200 else None)
    for who, role in ((bystander, "bystander"), (maker, "maker")):
        seen[role, "DELETE"] = (await world.call(who, "DELETE", path))[0]
    return seen


# The maker reads, cancels and deletes its job; a bystander of the org gets 404s.
MAKER_ONLY = {
    ("bystander", "GET"): 404,
    ("bystander", "GET executions"): 404,
    ("maker", "GET"): 200,
    ("maker", "GET executions"): 200,
    ("bystander", "cancel"): (404, None),
    ("maker", "cancel"): (200, "CANCELED"),
    ("bystander", "DELETE"): 404,
    ("maker", "DELETE"): 200,
}


async def test_the_maker_of_a_tags_job_reads_and_cancels_it(world: World) -> None:
    await world.add_device("t1", tags=["fw"])
    job_id = await made_by(world, "org_device_perms", {"tags": ["fw"]})
    assert (
        await reads_and_cancels(world, "org_device_perms", job_id, "project_device_perms")
        == MAKER_ONLY
    )


async def test_the_maker_of_a_project_job_reads_and_cancels_it(world: World) -> None:
    """Tags within Apollo, by a holder of Apollo's device permissions (no project admin)."""
    await world.add_device("p1", project_id=world.project_id, tags=["x"])
    job_id = await made_by(
        world, "project_device_perms", {"tags": ["x"]}, project_id=world.project_id
    )
    assert (
        await reads_and_cancels(world, "project_device_perms", job_id, "org_device_perms")
        == MAKER_ONLY
    )


async def test_the_maker_of_a_group_job_reads_and_cancels_it(world: World) -> None:
    """A group job by one who may update the group's devices, no admin of the group."""
    group_id = await pumps(world, await world.add_device("g1"))
    job_id = await made_by(world, "group_device_perms", {"group_id": group_id})
    assert await reads_and_cancels(world, "group_device_perms", job_id, "group_admin") == MAKER_ONLY


async def test_a_target_trashed_by_another_leaves_the_maker_its_job(world: World) -> None:
    keep, gone = await world.add_device("k1"), await world.add_device("k2")
    job_id = await made_by(world, "org_device_perms", {"device_ids": [keep, gone]})
    status, reply = await world.call("org_admin", "DELETE", f"/v2/devices/{gone}")
    assert status in (200, 204), reply
    assert (
        await reads_and_cancels(world, "org_device_perms", job_id, "group_device_perms")
        == MAKER_ONLY
    )


async def test_a_maker_who_lost_a_targets_update_right_reads_no_more(world: World) -> None:
    """The rights are asked again on every read: a tags job's maker who may no longer
    update one of its devices reads it no more, and still cancels it (next test: why)."""
    await pumps(world, await world.add_device("t1", tags=["fw"]))
    job_id = await made_by(world, "group_device_perms", {"tags": ["fw"]})
    path = f"/v2/jobs/{job_id}"
    status, reply = await world.call("group_device_perms", "GET", path)
    assert status == 200, reply
    await world.add_device("t2", tags=["fw"])  # a snapshot: not a target, asks nothing
    status, reply = await world.call("group_device_perms", "GET", path)
    assert status == 200, reply
    status, reply = await world.call("org_admin", "GET", "/v2/groups")
    group_id = next(g["id"] for g in reply["groups"] if g["name"] == "Pumps")
    status, reply = await world.call(
        "org_admin", "DELETE", f"/v2/groups/{group_id}/access/{world.id('group_device_perms')}"
    )
    assert status in (200, 204), reply
    for where in (path, f"{path}/executions"):
        status, reply = await world.call("group_device_perms", "GET", where)
        assert status == 404, (where, reply)
    status, reply = await world.call("group_device_perms", "POST", f"{path}/cancel", json={})
    assert status == 200 and reply["job"]["state"] == "CANCELED", reply


@pytest.mark.world(jobs_max_running_per_user=2)
async def test_a_maker_at_its_share_frees_it_by_cancelling_its_own(world: World) -> None:
    """The 409 past jobs_max_running_per_user says "cancel one": the maker can."""
    await world.add_device("t1", tags=["fw"])
    made = [await made_by(world, "org_device_perms", {"tags": ["fw"]}) for _ in range(2)]
    body = {"document": {}, "targets": {"tags": ["fw"]}}
    status, reply = await world.call("org_device_perms", "POST", "/v2/jobs", json=body)
    assert status == 409 and "cancel one" in reply["message"], reply
    status, reply = await world.call(
        "org_device_perms", "POST", f"/v2/jobs/{made[0]}/cancel", json={}
    )
    assert status == 200, reply
    status, reply = await world.call("org_device_perms", "POST", "/v2/jobs", json=body)
    assert status == 201, reply


# -- project sessions (#31): a session of Apollo sees and makes Apollo's jobs alone --------
async def three_jobs(world: World) -> dict[str, str]:
    """Jobs of Apollo, of Gemini and of the org, by the org admin (outside any session)."""
    gemini = await world.add_device("g1", project_id=world.second_project_id)
    bodies = {
        "apollo": ([world.id("device_member")], world.project_id),
        "gemini": ([gemini], world.second_project_id),
        "org": ([world.id("device_loner")], None),
    }
    made = {}
    for name, (ids, project) in bodies.items():
        filed = {"project_id": project} if project else {}
        made[name] = await made_by(world, "org_admin", {"device_ids": ids}, **filed)
    return made


@pytest.mark.parametrize("who", ["org_admin", "project_admin"])
async def test_a_project_session_lists_and_reads_its_projects_jobs_alone(
    world: World, who: str
) -> None:
    jobs = await three_jobs(world)
    token = await world.token(who, project_id=world.project_id)
    status, reply = await world.api.call("GET", "/v2/jobs", token)
    assert status == 200 and [j["id"] for j in reply["jobs"]] == [jobs["apollo"]], reply
    path = f"/v2/devices/{world.id('device_member')}/executions"
    status, reply = await world.api.call("GET", path, token)
    assert status == 200 and [e["job_id"] for e in reply["executions"]] == [jobs["apollo"]]
    status, reply = await world.api.call("GET", f"/v2/jobs/{jobs['apollo']}", token)
    assert status == 200, reply
    for name in ("gemini", "org"):
        path = f"/v2/jobs/{jobs[name]}"
        for method, where, more in (
            ("GET", path, {}),
            ("GET", f"{path}/executions", {}),
            ("POST", f"{path}/cancel", {"json": {"force": True}}),
            ("DELETE", f"{path}?force=true", {}),
        ):
            status, reply = await world.api.call(method, where, token, **more)
            assert status == 404 and reply == {"message": "Job not found"}, (name, where, reply)
    status, reply = await world.call("org_admin", "GET", "/v2/jobs")  # outside a session
    assert status == 200 and len(reply["jobs"]) == 3, reply


async def test_a_maker_in_another_projects_session_does_not_end_its_job(world: World) -> None:
    """Its own running job of the org is out of an Apollo session's sight too."""
    job_id = await made_by(world, "org_device_perms", {"device_ids": [world.id("device_loner")]})
    token = await world.token("org_device_perms", project_id=world.project_id)
    status, reply = await world.api.call("POST", f"/v2/jobs/{job_id}/cancel", token, json={})
    assert status == 404, reply
    status, reply = await world.api.call("GET", "/v2/jobs", token)
    assert status == 200 and reply["jobs"] == [], reply
    status, reply = await world.call(
        "org_device_perms", "POST", f"/v2/jobs/{job_id}/cancel", json={}
    )
    assert status == 200, reply


async def test_a_project_session_makes_jobs_in_its_project_alone(world: World) -> None:
    gemini = await world.add_device("g1", project_id=world.second_project_id)
    token = await world.token("org_admin", project_id=world.project_id)
    refused = (
        {"targets": {"device_ids": [gemini]}, "project_id": world.second_project_id},
        {"targets": {"project_id": world.second_project_id}},
    )
    for body in refused:
        status, reply = await world.api.call(
            "POST", "/v2/jobs", token, json={"document": {}, **body}
        )
        assert status == 400 and reply["message"].startswith("project_id:"), (body, reply)
    for ids in ([gemini], [world.id("device_loner")]):  # the session's project by default
        body = {"document": {}, "targets": {"device_ids": ids}}
        status, reply = await world.api.call("POST", "/v2/jobs", token, json=body)
        assert status == 400 and reply["message"].startswith("targets:"), (ids, reply)
    body = {"document": {}, "targets": {"device_ids": [world.id("device_member")]}}
    status, reply = await world.api.call("POST", "/v2/jobs", token, json=body)
    assert status == 201 and reply["job"]["project_id"] == world.project_id, reply
    status, reply = await world.call("org_admin", "GET", "/v2/jobs")
    assert status == 200 and [j["project_id"] for j in reply["jobs"]] == [world.project_id]
