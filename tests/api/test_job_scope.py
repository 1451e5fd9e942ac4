"""A job's scope (docs/jobs.md, "Who may"): a continuous job takes every device that will
ever join its project (or the org), so only an admin of that scope makes one, whoever
matches now; the devices that join later are added only inside the job's project and up
to jobs_max_targets; every target of a job filed in a project is in it; a caller never
learns a device ID from a refusal, nor names a project or group it does not know; the
maker who lost the rights a job took no longer reads nor cancels it.
"""

from __future__ import annotations

from typing import Any

import pytest

from edge.jobs.service import UNSEEN
from tests.world import World

pytestmark = pytest.mark.world(jobs_tick_seconds=3600)


async def post(world: World, who: str, targets: dict[str, Any], **more: Any) -> tuple[int, Any]:
    body = {"document": {"v": 1}, "targets": targets, **more}
    return await world.call(who, "POST", "/v2/jobs", json=body)


async def made(world: World, who: str, targets: dict[str, Any], **more: Any) -> str:
    status, reply = await post(world, who, targets, **more)
    assert status == 201, reply
    return str(reply["job"]["id"])


async def targeted(world: World, job_id: str) -> set[str]:
    status, reply = await world.call("org_admin", "GET", f"/v2/jobs/{job_id}/executions")
    assert status == 200, reply
    return {e["device_id"] for e in reply["executions"]}


# -- 1. a continuous job needs admin of its scope, even over no device --------------------
@pytest.mark.parametrize(
    ("who", "targets", "expected"),
    [
        ("plain", "tags", 403),  # org-wide: org admins only
        ("project_admin", "tags", 403),  # a project admin's tags need its project
        ("group_admin", "ward", 403),  # Ward is org-level: its scope is the org
        ("project_updater", "apollo", 403),  # updates Apollo's devices, is not its admin
        ("project_device_perms", "apollo", 403),
        ("plain", "gemini", 404),  # does not know Gemini
        ("plain", "lab", 404),  # does not see Lab
        ("project_admin", "apollo", 403),  # and every current device: device_boss is an org admin
        ("project_admin", "lab", 201),
        ("org_admin", "tags", 201),
        ("org_admin", "ward", 201),
    ],
)
async def test_a_continuous_job_needs_an_admin_of_its_scope(
    world: World, who: str, targets: str, expected: int
) -> None:
    named: dict[str, dict[str, Any]] = {
        "tags": {"tags": ["prod"]},
        "ward": {"group_id": world.org_group_id},
        "lab": {"group_id": world.project_group_id},  # no device member
        "apollo": {"project_id": world.project_id},
        "gemini": {"project_id": world.second_project_id},  # no device
    }
    status, reply = await post(world, who, named[targets], continuous=True)
    assert status == expected, reply


async def test_a_project_admins_tags_job_stays_in_its_project(world: World) -> None:
    job_id = await made(
        world, "project_admin", {"tags": ["fw"]}, continuous=True, project_id=world.project_id
    )
    apollo = await world.add_device("a1", project_id=world.project_id, tags=["fw"])
    gemini = await world.add_device("g1", project_id=world.second_project_id, tags=["fw"])
    org_level = await world.add_device("o1", tags=["fw"])
    status, _ = await world.call(
        "org_admin", "PATCH", f"/v2/devices/{world.id('device_loner')}", json={"tags": ["fw"]}
    )
    assert status == 200
    assert await targeted(world, job_id) == {apollo}
    assert {gemini, org_level, world.id("device_loner")}.isdisjoint(await targeted(world, job_id))


async def test_a_group_job_takes_only_members_of_its_project(world: World) -> None:
    """Lab is Apollo's: a Gemini device or an org-level one that joins it is no target."""
    job_id = await made(
        world, "project_admin", {"group_id": world.project_group_id}, continuous=True
    )
    gemini = await world.add_device("g1", project_id=world.second_project_id)
    apollo = await world.add_device("a1", project_id=world.project_id)
    for device in (gemini, world.id("device_loner"), apollo):
        await world.grant("group", world.project_group_id, device, "device")
    assert await targeted(world, job_id) == {apollo}


async def test_an_org_level_group_job_filed_in_a_project_keeps_to_it(world: World) -> None:
    """Ward's members are Apollo's: filed in Apollo, a joining org-level device is no
    target; filed in Gemini, its members now are outside the job's project: 400."""
    job_id = await made(
        world,
        "org_admin",
        {"group_id": world.org_group_id},
        continuous=True,
        project_id=world.project_id,
    )
    await world.grant("group", world.org_group_id, world.id("device_loner"), "device")
    assert world.id("device_loner") not in await targeted(world, job_id)
    for continuous in (False, True):
        status, reply = await post(
            world,
            "org_admin",
            {"group_id": world.org_group_id},
            continuous=continuous,
            project_id=world.second_project_id,
        )
        assert status == 400 and "not in the job's project" in reply["message"], reply
    status, reply = await post(
        world,
        "org_admin",
        {"group_id": world.project_group_id},
        project_id=world.second_project_id,
        continuous=True,
    )
    assert status == 400 and reply["message"].startswith("targets.group_id"), reply


# -- 5. no device ID in a refusal ---------------------------------------------------------
@pytest.mark.parametrize(
    ("who", "targets"),
    [
        ("project_admin", {"tags": ["secret"]}),  # a Gemini device's tag, org-wide
        ("project_admin", {"device_ids": ["gemini"]}),
        ("project_admin", {"device_ids": ["nosuchdevice0000"]}),
        ("group_admin", {"tags": ["secret"]}),
    ],
)
async def test_a_refusal_names_no_device_the_caller_cannot_see(
    world: World, who: str, targets: dict[str, Any]
) -> None:
    hidden = await world.add_device("g1", project_id=world.second_project_id, tags=["secret"])
    if targets.get("device_ids") == ["gemini"]:
        targets = {"device_ids": [hidden]}
    status, reply = await post(world, who, targets)
    assert status == 404 and reply["message"] == UNSEEN, reply
    assert hidden not in reply["message"]


async def test_an_unseen_group_or_project_is_a_404_before_its_members(world: World) -> None:
    status, reply = await post(world, "plain", {"group_id": world.org_group_id})
    assert (status, reply["message"]) == (404, "targets.group_id: group not found")
    status, reply = await post(world, "group_admin", {"project_id": world.project_id})
    assert (status, reply["message"]) == (404, "project_id: project not found")


# -- 6. every target in the job's project -------------------------------------------------
async def test_an_org_admins_job_in_a_project_targets_only_its_devices(world: World) -> None:
    for targets in ({"group_id": world.org_group_id}, {"device_ids": [world.id("device_member")]}):
        status, reply = await post(world, "org_admin", targets, project_id=world.second_project_id)
        assert status == 400 and "not in the job's project" in reply["message"], reply


# -- 7. a continuous job stops at jobs_max_targets ----------------------------------------
@pytest.mark.world(jobs_tick_seconds=3600, jobs_max_targets=2)
async def test_a_continuous_job_stops_growing_at_the_most_targets(world: World) -> None:
    first = await world.add_device("t0", tags=["fw"])
    job_id = await made(world, "org_admin", {"tags": ["fw"]}, continuous=True)
    later = [await world.add_device(f"t{i}", tags=["fw"]) for i in range(1, 4)]
    assert await targeted(world, job_id) == {first, later[0]}
    status, reply = await world.call("org_admin", "GET", f"/v2/jobs/{job_id}")
    assert status == 200 and reply["job"]["counts"]["QUEUED"] == 2


# -- 8. the project, and who reads a job ---------------------------------------------------
@pytest.mark.parametrize("project", ["", "other"])
async def test_an_empty_or_another_project_id_is_a_400(world: World, project: str) -> None:
    project_id = project and world.second_project_id
    targets = {"project_id": world.project_id}
    status, reply = await post(world, "org_admin", targets, project_id=project_id)
    assert status == 400 and reply["message"].startswith("project_id:"), reply


async def test_a_maker_who_lost_the_rights_no_longer_reads_but_still_cancels(
    world: World,
) -> None:
    """Reading takes the rights making took; cancelling a running job of one's own does
    not, so that its share of running jobs can always be freed (docs/jobs.md)."""
    job_id = await made(world, "group_admin", {"device_ids": [world.id("device_member")]})
    group_admin = world.id("group_admin")
    path = f"/v2/jobs/{job_id}"
    status, _ = await world.call("group_admin", "GET", path)
    assert status == 200

    def drop(conn: Any) -> None:
        conn.execute("DELETE FROM access WHERE grantee_id = ?", (group_admin,))

    await world.site.services.db.write(drop)
    for method, where in (("GET", path), ("GET", f"{path}/executions")):
        status, _ = await world.call("group_admin", method, where)
        assert status == 404
    status, _ = await world.call("group_admin", "DELETE", f"{path}?force=true")
    assert status == 404
    status, reply = await world.call("group_admin", "POST", f"{path}/cancel", json={})
    assert status == 200 and reply["job"]["state"] == "CANCELED", reply
    status, reply = await world.call("group_admin", "POST", f"{path}/cancel", json={})
    assert status == 404, reply  # ended: no share to free, and it reads it no more
    status, reply = await world.call("org_admin", "GET", path)
    assert status == 200 and reply["job"]["state"] == "CANCELED", reply


@pytest.mark.parametrize(("who", "reaches"), [("project_admin", False), ("org_admin", True)])
async def test_an_admin_device_joins_only_an_org_admins_continuous_job(
    world: World, who: str, reaches: bool
) -> None:
    """device_boss (an org admin, Apollo's) joins Lab: a project admin may not update it,
    so its continuous job does not take it; an org admin's does."""
    job_id = await made(world, who, {"group_id": world.project_group_id}, continuous=True)
    apollo = await world.add_device("a1", project_id=world.project_id)
    for device in (world.id("device_boss"), apollo):
        await world.grant("group", world.project_group_id, device, "device")
    expected = {apollo, world.id("device_boss")} if reaches else {apollo}
    assert await targeted(world, job_id) == expected
