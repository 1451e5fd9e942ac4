"""A job's firmware artifact (docs/jobs.md, "Artifacts"): a file of a group's files store
pinned by its ETag, handed to each device as a presigned URL that resumes with `Range`,
with its size and SHA-256; a changed or deleted artifact fails the executions not yet
finished, with that reason; whoever makes the job must read the file.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from edge.kernel import clock
from tests.world import World

pytestmark = pytest.mark.world("content", jobs_tick_seconds=3600)
FIRMWARE = bytes(range(256)) * 1024  # 256 KiB


async def firmware_job(world: World, who: str = "org_admin") -> tuple[int, Any]:
    status, reply = await world.upload("org_admin", "/fw/pump-2.0.bin", FIRMWARE)
    assert status == 200, reply
    body = {
        "document": {"version": "2.0"},
        "targets": {"device_ids": [world.id("device_member"), world.id("device_loner")]},
        "artifact": {"group_id": world.files_group_id, "path": "fw/pump-2.0.bin"},
    }
    return await world.call(who, "POST", "/v2/jobs", json=body)


async def the_document(world: World, device: str, job_id: str) -> dict[str, Any]:
    await world.site.services.job_scheduler.tick()
    path = f"/v2/devices/{world.id(device)}/jobs/{job_id}"
    status, reply = await world.call(device, "GET", path)
    assert status == 200, reply
    return reply["execution"]


async def test_each_device_gets_a_url_that_resumes_with_its_size_and_digest(world: World) -> None:
    status, reply = await firmware_job(world)
    assert status == 201, reply
    job = reply["job"]
    assert job["artifact"]["sha256"] == hashlib.sha256(FIRMWARE).hexdigest()
    execution = await the_document(world, "device_member", job["id"])
    artifact = execution["document"]["artifact"]
    assert execution["document"]["version"] == "2.0"
    assert artifact["size"] == len(FIRMWARE) and artifact["sha256"] == job["artifact"]["sha256"]
    expires = int(artifact["url"].split("expires=")[1].split("&")[0])
    deadline = clock.parse(execution["deadline"]).timestamp()
    assert expires > deadline  # the URL outlives the execution's timeout
    status, data, headers = await world.fetch(artifact["url"])
    assert status == 200 and hashlib.sha256(data).hexdigest() == artifact["sha256"]
    status, part, _ = await world.fetch(artifact["url"], Range="bytes=1000-")
    assert status == 206 and part == FIRMWARE[1000:]  # a broken download resumes


@pytest.mark.parametrize("how", ["changed", "deleted"])
async def test_a_changed_or_deleted_artifact_fails_what_is_unfinished(
    world: World, how: str
) -> None:
    status, reply = await firmware_job(world)
    assert status == 201, reply
    job_id = reply["job"]["id"]
    await the_document(world, "device_member", job_id)
    path = f"/v2/devices/{world.id('device_member')}/jobs/{job_id}"
    status, _ = await world.call("device_member", "PATCH", path, json={"state": "SUCCEEDED"})
    assert status == 200
    if how == "changed":
        status, _ = await world.upload("org_admin", "/fw/pump-2.0.bin", b"another build")
    else:
        status, _ = await world.files("org_admin", "DELETE", "/fw/pump-2.0.bin")
    assert status == 200
    await world.site.services.job_scheduler.tick()
    status, reply = await world.call("org_admin", "GET", f"/v2/jobs/{job_id}/executions")
    states = {e["device_id"]: (e["state"], e["status_details"]) for e in reply["executions"]}
    assert states[world.id("device_member")] == ("SUCCEEDED", {})  # it had finished
    reason = f"artifact_{how}"
    assert states[world.id("device_loner")] == ("FAILED", {"reason": reason})
    status, reply = await world.call("org_admin", "GET", f"/v2/jobs/{job_id}")
    assert reply["job"]["state"] == "ABORTED" and reply["job"]["reason"] == reason


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        ("org_admin", 201),
        ("file_reader", 404),  # reads the file, may not update the devices (sees neither)
        ("org_device_perms", 404),  # updates the devices, does not see the group's files
        ("project_admin", 404),  # the admin of Apollo: device_loner is no device of Apollo
    ],
)
async def test_the_maker_reads_the_artifact_and_updates_every_target(
    world: World, who: str, expected: int
) -> None:
    status, reply = await firmware_job(world, who)
    assert status == expected, reply
