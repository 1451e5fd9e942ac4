"""A job's firmware artifact (docs/jobs.md, "Artifacts"): a file of a group's files store
pinned by its ETag, handed to each device as a presigned URL that resumes with `Range`,
with its size and SHA-256; a changed or deleted artifact fails the executions not yet
finished, with that reason; whoever makes the job must read the file.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from edge.jobs.artifacts import URL_MARGIN
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


async def test_the_url_serves_the_pinned_file_only(world: World) -> None:
    """Overwritten before the scheduler notices: the URL handed out is a 404, never the
    new bytes (a link is signed with the pinned ETag)."""
    status, reply = await firmware_job(world)
    assert status == 201, reply
    execution = await the_document(world, "device_member", reply["job"]["id"])
    url = execution["document"]["artifact"]["url"]
    assert "etag=" in url
    status, _ = await world.upload("org_admin", "/fw/pump-2.0.bin", b"another build")
    assert status == 200
    status, data, _ = await world.fetch(url)
    assert status == 404 and data != b"another build"
    spoofed = url.replace("etag=", "etag=x")
    status, _, _ = await world.fetch(spoofed)
    assert status == 403  # the ETag is signed


async def test_only_a_released_unfinished_execution_gets_a_url(world: World) -> None:
    """device_loner's execution is canceled before its release, device_member's ends:
    neither gets a URL again; a released one's lasts until its deadline and a margin."""
    status, reply = await firmware_job(world)
    job_id = reply["job"]["id"]
    path = f"/v2/jobs/{job_id}"
    execution = await the_document(world, "device_member", job_id)  # releases both
    expires = int(execution["document"]["artifact"]["url"].split("expires=")[1].split("&")[0])
    assert expires == int(clock.parse(execution["deadline"]).timestamp()) + URL_MARGIN
    device = f"/v2/devices/{world.id('device_member')}/jobs/{job_id}"
    status, done = await world.call("device_member", "PATCH", device, json={"state": "SUCCEEDED"})
    assert status == 200 and "url" not in done["execution"]["document"]["artifact"]
    status, _ = await world.call("org_admin", "POST", f"{path}/cancel", json={"force": True})
    assert status == 200
    for who in ("device_member", "device_loner"):
        where = f"/v2/devices/{world.id(who)}/jobs/{job_id}"
        status, got = await world.call(who, "GET", where)
        assert status == 200, got
        artifact = got["execution"]["document"]["artifact"]
        assert "url" not in artifact and artifact["sha256"] == hashlib.sha256(FIRMWARE).hexdigest()


async def test_a_file_is_hashed_once_per_etag(world: World, monkeypatch: Any) -> None:
    artifacts = world.site.services.jobs._artifacts
    hashed: list[int] = []
    digest = artifacts._sha256
    monkeypatch.setattr(artifacts, "_sha256", lambda blobs: hashed.append(1) or digest(blobs))
    for _ in range(3):
        status, reply = await firmware_job(world)  # uploads the same bytes again
        assert status == 201, reply
    assert len(hashed) <= 3  # an upload is a new ETag
    before = len(hashed)
    body = {
        "document": {},
        "targets": {"device_ids": [world.id("device_member")]},
        "artifact": {"group_id": world.files_group_id, "path": "fw/pump-2.0.bin"},
    }
    for _ in range(3):
        status, reply = await world.call("org_admin", "POST", "/v2/jobs", json=body)
        assert (
            status == 201
            and reply["job"]["artifact"]["sha256"] == hashlib.sha256(FIRMWARE).hexdigest()
        )
    assert len(hashed) == before
