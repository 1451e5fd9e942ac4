"""Rollout jobs over HTTP (docs/jobs.md): a job rolled out to the end, throttled by its
rate and by its executions in progress, aborted at its failure threshold, canceled with
and without force, snapshot and continuous, retried after a failure or a timeout (a
REJECTED execution never), timed out; executions updated by the
device with its API key, with version conflicts; deleted devices' executions REMOVED and
back from the trash; the audit events.

The scheduler is driven by `tick()` (the seam a benchmark times too), and time by the
test clock; the background scheduler of the app runs as well, which changes nothing a test
asserts: each tick is one transaction under the same limits.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest

from edge.jobs import notices
from edge.jobs.progress import Changes
from edge.jobs.scheduler import Scheduler
from edge.kernel import clock
from storage import jobs as job_store
from tests.spies import calls_of
from tests.sse import end_streams, stream_of
from tests.world import World

pytestmark = pytest.mark.world(jobs_tick_seconds=3600)


def scheduler(world: World) -> Scheduler:
    return world.site.services.job_scheduler


async def new_job(world: World, body: dict[str, Any], who: str = "org_admin") -> dict[str, Any]:
    status, reply = await world.call(who, "POST", "/v2/jobs", json={"document": {"v": 2}, **body})
    assert status == 201, reply
    return reply["job"]


async def job_of(world: World, job_id: str) -> dict[str, Any]:
    status, reply = await world.call("org_admin", "GET", f"/v2/jobs/{job_id}")
    assert status == 200, reply
    return reply["job"]


async def devices(world: World, count: int, **values: Any) -> list[str]:
    return [await world.add_device(f"pump-{i}", **values) for i in range(count)]


async def report(
    world: World, device: str, job_id: str, body: dict[str, Any], expected: int = 200
) -> dict[str, Any]:
    path = f"/v2/devices/{world.id(device)}/jobs/{job_id}"
    status, reply = await world.call(device, "PATCH", path, json=body)
    assert status == expected, reply
    return reply


async def test_a_job_rolled_out_to_the_end(world: World) -> None:
    targets = [world.id("device_member"), world.id("device_loner")]
    job = await new_job(world, {"targets": {"device_ids": targets}, "description": "fw 2"})
    assert job["state"] == "SCHEDULED" and job["counts"]["QUEUED"] == 2
    await scheduler(world).tick()
    for device in ("device_member", "device_loner"):
        status, pending = await world.call(device, "GET", f"/v2/devices/{world.id(device)}/jobs")
        assert status == 200 and [p["job_id"] for p in pending["jobs"]] == [job["id"]]
        status, got = await world.call(
            device, "GET", f"/v2/devices/{world.id(device)}/jobs/{job['id']}"
        )
        assert status == 200 and got["execution"]["document"] == {"v": 2}
        moved = await report(world, device, job["id"], {"state": "IN_PROGRESS", "progress": 40})
        assert moved["execution"]["progress"] == 40 and moved["execution"]["version"] == 2
        await report(world, device, job["id"], {"state": "SUCCEEDED", "expected_version": 2})
    done = await job_of(world, job["id"])
    assert done["state"] == "COMPLETED" and done["counts"]["SUCCEEDED"] == 2


async def executions(world: World, job_id: str) -> dict[str, dict[str, Any]]:
    """The job's executions by device name (of the world's devices) or ID."""
    status, reply = await world.call("org_admin", "GET", f"/v2/jobs/{job_id}/executions")
    assert status == 200, reply
    names = {device_id: name for name, device_id in world.devices.items()}
    return {names.get(e["device_id"], e["device_id"]): e for e in reply["executions"]}


def released(found: dict[str, dict[str, Any]]) -> set[str]:
    return {name for name, e in found.items() if "released_date" in e}


async def test_throttled_by_its_rate_per_minute(world: World) -> None:
    clock.freeze()
    pumps = await devices(world, 5)
    policy = {"max_per_minute": 2}
    job = await new_job(world, {"targets": {"device_ids": pumps}, "policy": policy})
    await scheduler(world).tick()
    await scheduler(world).tick()
    assert released(await executions(world, job["id"])) == {"pump-0", "pump-1"}
    clock.advance(timedelta(seconds=59))
    await scheduler(world).tick()
    assert len(released(await executions(world, job["id"]))) == 2  # the same minute
    clock.advance(timedelta(seconds=1))
    await scheduler(world).tick()
    assert released(await executions(world, job["id"])) == {f"pump-{i}" for i in range(4)}


async def test_throttled_by_its_executions_in_progress(world: World) -> None:
    pumps = await devices(world, 4)
    job = await new_job(world, {"targets": {"device_ids": pumps}, "policy": {"max_in_progress": 2}})
    await scheduler(world).tick()
    await scheduler(world).tick()
    assert released(await executions(world, job["id"])) == {"pump-0", "pump-1"}
    await report(world, "pump-0", job["id"], {"state": "IN_PROGRESS"})
    await scheduler(world).tick()
    assert len(released(await executions(world, job["id"]))) == 2  # in progress still counts
    await report(world, "pump-0", job["id"], {"state": "SUCCEEDED"})
    await scheduler(world).tick()
    assert released(await executions(world, job["id"])) == {"pump-0", "pump-1", "pump-2"}


async def test_aborted_at_its_failure_threshold(world: World) -> None:
    pumps = await devices(world, 6)
    policy = {"abort_percent": 50, "abort_min_finished": 3}
    job = await new_job(world, {"targets": {"device_ids": pumps}, "policy": policy})
    await scheduler(world).tick()
    await report(world, "pump-0", job["id"], {"state": "FAILED"})
    await report(world, "pump-1", job["id"], {"state": "FAILED"})  # 2 of 2: too few to judge
    assert (await job_of(world, job["id"]))["state"] == "IN_PROGRESS"
    await report(world, "pump-2", job["id"], {"state": "SUCCEEDED"})  # 2 of 3 failed: > 50 %
    aborted = await job_of(world, job["id"])
    assert aborted["state"] == "ABORTED" and "2 of 3" in aborted["reason"]
    assert aborted["counts"] | {} == {
        **aborted["counts"],
        "FAILED": 2,
        "SUCCEEDED": 1,
        "CANCELED": 3,
        "QUEUED": 0,
    }
    late = await report(world, "pump-3", job["id"], {"state": "SUCCEEDED"}, expected=409)
    assert "ended (CANCELED)" in late["message"] and late["version"] == 2


@pytest.mark.parametrize("force", [False, True])
async def test_canceled_with_and_without_force(world: World, force: bool) -> None:
    pumps = await devices(world, 3)
    job = await new_job(world, {"targets": {"device_ids": pumps}, "policy": {"max_in_progress": 2}})
    await scheduler(world).tick()
    await report(world, "pump-0", job["id"], {"state": "IN_PROGRESS"})
    path = f"/v2/jobs/{job['id']}/cancel"
    status, reply = await world.call("org_admin", "POST", path, json={"force": force})
    assert status == 200 and reply["job"]["state"] == "CANCELED", reply
    found = await executions(world, job["id"])
    assert found["pump-0"]["state"] == ("CANCELED" if force else "IN_PROGRESS")
    assert found["pump-1"]["state"] == found["pump-2"]["state"] == "CANCELED"
    # without force, what is in progress may still finish; with force, it has ended
    await report(world, "pump-0", job["id"], {"state": "SUCCEEDED"}, 409 if force else 200)
    status, reply = await world.call("org_admin", "POST", path, json={})
    assert status == 409 and "ended (CANCELED)" in reply["message"]


async def test_a_snapshot_keeps_its_targets(world: World) -> None:
    await devices(world, 2, tags=["pumps"])
    job = await new_job(world, {"targets": {"tags": ["pumps"]}})
    await world.add_device("late", tags=["pumps"])
    assert set(await executions(world, job["id"])) == {"pump-0", "pump-1"}


async def test_a_continuous_job_takes_devices_that_join_later(world: World) -> None:
    await devices(world, 1, tags=["pumps"])
    body = {"targets": {"tags": ["pumps"]}, "continuous": True}
    job = await new_job(world, body)
    await world.add_device("late", tags=["pumps"])  # a new device with the tag
    moved = await world.add_device("moved")
    status, reply = await world.call(
        "org_admin", "PATCH", f"/v2/devices/{moved}", json={"tags": ["pumps"]}
    )
    assert status == 200, reply
    await world.add_device("other", tags=["valves"])
    assert set(await executions(world, job["id"])) == {"pump-0", "late", "moved"}
    await scheduler(world).tick()
    for device in ("pump-0", "late", "moved"):
        await report(world, device, job["id"], {"state": "SUCCEEDED"})
    assert (await job_of(world, job["id"]))["state"] == "IN_PROGRESS"  # it waits for more


async def test_a_continuous_group_job_takes_new_members(world: World) -> None:
    ward = world.org_group_id
    body = {"targets": {"group_id": ward}, "continuous": True}
    job = await new_job(world, body)
    before = set(await executions(world, job["id"]))
    assert before == {"device_member", "device_boss"}
    await world.grant("group", ward, world.id("device_loner"), "device")
    assert set(await executions(world, job["id"])) == before | {"device_loner"}


async def test_timed_out_and_retried(world: World) -> None:
    clock.freeze()
    pumps = await devices(world, 1)
    policy = {"timeout_seconds": 60, "max_retries": 1}
    job = await new_job(world, {"targets": {"device_ids": pumps}, "policy": policy})
    await scheduler(world).tick()
    clock.advance(timedelta(seconds=61))
    await scheduler(world).tick()  # timed out: queued again, released again
    await scheduler(world).tick()
    again = (await executions(world, job["id"]))["pump-0"]
    assert again["attempts"] == 1 and again["state"] == "QUEUED" and "released_date" in again
    assert again["status_details"] == {"reason": "timed_out", "retrying_after": "TIMED_OUT"}
    clock.advance(timedelta(seconds=61))
    await scheduler(world).tick()  # no retry left
    final = (await executions(world, job["id"]))["pump-0"]
    assert final["state"] == "TIMED_OUT"
    assert (await job_of(world, job["id"]))["state"] == "COMPLETED"


async def pending(world: World, device: str) -> list[str]:
    """The jobs the device is given now (its own `GET .../jobs`, with its API key)."""
    status, reply = await world.call(device, "GET", f"/v2/devices/{world.id(device)}/jobs")
    assert status == 200, reply
    return [p["job_id"] for p in reply["jobs"]]


async def test_failed_and_retried_until_no_retry_is_left(world: World) -> None:
    """A FAILED execution goes back to the end of the queue `max_retries` times (each
    released again by the scheduler, `attempts` counting), then stays FAILED."""
    pumps = await devices(world, 1)
    policy = {"max_retries": 2}
    job = await new_job(world, {"targets": {"device_ids": pumps}, "policy": policy})
    failed = {"state": "FAILED", "status_details": {"error": "flash"}}
    for attempt in (1, 2):
        await scheduler(world).tick()
        assert await pending(world, "pump-0") == [job["id"]]
        await report(world, "pump-0", job["id"], {"state": "IN_PROGRESS", "progress": 30})
        moved = (await report(world, "pump-0", job["id"], failed))["execution"]
        assert moved["state"] == "QUEUED" and moved["attempts"] == attempt
        assert moved["status_details"] == {"error": "flash", "retrying_after": "FAILED"}
        assert moved["progress"] == 0
        # back in the queue, as if never released: no release, start, deadline or end
        assert not {"released_date", "started_date", "deadline", "finished_date"} & set(moved)
        assert not released(await executions(world, job["id"]))
        assert await pending(world, "pump-0") == []  # queued again, not yet released
        counts = (await job_of(world, job["id"]))["counts"]
        assert (counts["QUEUED"], counts["FAILED"]) == (1, 0)
    await scheduler(world).tick()
    assert await pending(world, "pump-0") == [job["id"]]
    final = (await report(world, "pump-0", job["id"], failed))["execution"]
    assert final["state"] == "FAILED" and final["attempts"] == 2
    assert final["status_details"] == {"error": "flash"} and "finished_date" in final
    await scheduler(world).tick()
    assert await pending(world, "pump-0") == []
    done = await job_of(world, job["id"])
    assert done["state"] == "COMPLETED"
    assert (done["counts"]["FAILED"], done["counts"]["QUEUED"]) == (1, 0)


async def test_a_rejected_execution_is_not_retried(world: World) -> None:
    """A device that REJECTED its job is not asked again, whatever retries are left."""
    pumps = await devices(world, 1)
    job = await new_job(world, {"targets": {"device_ids": pumps}, "policy": {"max_retries": 3}})
    await scheduler(world).tick()
    refused = {"state": "REJECTED", "status_details": {"why": "wrong model"}}
    final = (await report(world, "pump-0", job["id"], refused))["execution"]
    assert final["state"] == "REJECTED" and final["attempts"] == 0
    assert final["status_details"] == {"why": "wrong model"} and "finished_date" in final
    await scheduler(world).tick()
    assert await pending(world, "pump-0") == []
    assert (await executions(world, job["id"]))["pump-0"]["state"] == "REJECTED"
    done = await job_of(world, job["id"])
    assert done["state"] == "COMPLETED" and done["counts"]["REJECTED"] == 1


async def test_version_conflicts_name_the_current_version(world: World) -> None:
    pumps = await devices(world, 1)
    job = await new_job(world, {"targets": {"device_ids": pumps}})
    await scheduler(world).tick()
    await report(world, "pump-0", job["id"], {"state": "IN_PROGRESS", "expected_version": 1})
    stale = {"state": "IN_PROGRESS", "progress": 50, "expected_version": 1}
    refused = await report(world, "pump-0", job["id"], stale, expected=409)
    assert refused["version"] == 2 and "at version 2, not 1" in refused["message"]
    fresh = await report(world, "pump-0", job["id"], {**stale, "expected_version": 2})
    assert fresh["execution"]["progress"] == 50 and fresh["execution"]["version"] == 3


async def test_an_execution_not_released_is_not_the_devices_yet(world: World) -> None:
    pumps = await devices(world, 2)
    job = await new_job(world, {"targets": {"device_ids": pumps}, "policy": {"max_in_progress": 1}})
    await scheduler(world).tick()
    status, _ = await world.call("pump-1", "GET", f"/v2/devices/{pumps[1]}/jobs/{job['id']}")
    assert status == 404
    await report(world, "pump-1", job["id"], {"state": "SUCCEEDED"}, expected=404)


async def test_a_deleted_devices_executions_are_removed_and_come_back(world: World) -> None:
    pumps = await devices(world, 2)
    job = await new_job(world, {"targets": {"device_ids": pumps}})
    status, reply = await world.call("org_admin", "DELETE", f"/v2/devices/{pumps[0]}")
    assert status == 200, reply
    found = await executions(world, job["id"])
    assert found["pump-0"]["state"] == "REMOVED"
    assert (await job_of(world, job["id"]))["counts"]["REMOVED"] == 1
    status, reply = await world.call("org_admin", "POST", f"/v2/trash/{pumps[0]}/restore")
    assert status == 200, reply
    assert (await executions(world, job["id"]))["pump-0"]["state"] == "QUEUED"
    assert (await job_of(world, job["id"]))["counts"]["REMOVED"] == 0


async def test_deleting_a_running_job_needs_force(world: World) -> None:
    pumps = await devices(world, 1)
    job = await new_job(world, {"targets": {"device_ids": pumps}})
    status, reply = await world.call("org_admin", "DELETE", f"/v2/jobs/{job['id']}")
    assert status == 409, reply
    status, reply = await world.call("org_admin", "DELETE", f"/v2/jobs/{job['id']}?force=true")
    assert status == 200, reply
    status, _ = await world.call("org_admin", "GET", f"/v2/jobs/{job['id']}")
    assert status == 404


async def test_create_cancel_and_delete_are_audited(world: World) -> None:
    pumps = await devices(world, 1)
    job = await new_job(world, {"targets": {"device_ids": pumps}})
    await world.call("org_admin", "POST", f"/v2/jobs/{job['id']}/cancel", json={})
    await world.call("org_admin", "DELETE", f"/v2/jobs/{job['id']}")
    status, reply = await world.call("org_admin", "GET", "/v2/audit?target_id=" + job["id"])
    assert status == 200, reply
    actions = sorted(e["action"] for e in reply["audit_events"])
    assert actions == ["job_canceled", "job_created", "job_deleted"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"targets": {}}, "exactly one of"),
        ({"targets": {"device_ids": []}}, "1 to"),
        ({"targets": {"device_ids": ["x"]}, "continuous": True}, "a group, a project or tags"),
        ({"targets": {"tags": ["a"]}, "policy": {"abort_percent": 101}}, "between 0 and 100"),
    ],
)
async def test_bad_jobs_are_refused_naming_the_rule(
    world: World, body: dict[str, Any], words: str
) -> None:
    status, reply = await world.call("org_admin", "POST", "/v2/jobs", json={"document": {}, **body})
    assert status == 400 and words in reply["message"], reply


async def test_targets_that_match_nothing_are_not_found(world: World) -> None:
    for targets in ({"tags": ["none-has-it"]}, {"project_id": "nope"}, {"group_id": "nope"}):
        body = {"document": {}, "targets": targets}
        status, reply = await world.call("org_admin", "POST", "/v2/jobs", json=body)
        assert status == 404, (targets, reply)


async def test_job_progress_is_a_live_event_for_those_who_may_read_the_job(world: World) -> None:
    admin = await stream_of(world, "org_admin", kinds="jobs")
    bystander = await stream_of(world, "group_device_perms", kinds="jobs,twins")
    pumps = await devices(world, 1)
    job = await new_job(world, {"targets": {"device_ids": pumps}})
    await scheduler(world).tick()
    await report(world, "pump-0", job["id"], {"state": "SUCCEEDED"})
    twin = {"desired": {"mode": "eco"}}
    member = world.id("device_member")
    status, _ = await world.call("org_admin", "PATCH", f"/v2/devices/{member}/twin", json=twin)
    assert status == 200
    end_streams(world)
    told = [e for e in await admin.rest() if e.kind == "jobs"]
    assert told and {e.data["job_id"] for e in told} == {job["id"]}
    assert told[-1].data["state"] == "COMPLETED" and told[-1].data["counts"]["SUCCEEDED"] == 1
    assert [e.kind for e in await bystander.rest()] == ["twins"]  # never the job's


@pytest.mark.parametrize("continuous", [False, True])
async def test_a_project_job_snapshot_or_continuous(world: World, continuous: bool) -> None:
    apollo = world.project_id
    body = {"targets": {"project_id": apollo}, "continuous": continuous}
    job = await new_job(world, body)
    assert job["project_id"] == apollo
    before = set(await executions(world, job["id"]))
    assert before == {"device_member", "device_boss"}  # Apollo's devices when it was made
    await world.add_device("new-in-apollo", project_id=apollo)
    await world.add_device("elsewhere")
    after = set(await executions(world, job["id"]))
    assert after == (before | {"new-in-apollo"} if continuous else before)


@pytest.mark.world(jobs_tick_seconds=3600, jobs_max_running=2, jobs_admin_reserve=1)
async def test_an_org_runs_at_most_jobs_max_running_jobs(world: World) -> None:
    """Another org's jobs do not count; an ended job makes room."""
    pumps = await devices(world, 1)
    first = await new_job(world, {"targets": {"device_ids": pumps}})
    await new_job(world, {"targets": {"device_ids": pumps}})
    body = {"document": {}, "targets": {"device_ids": pumps}}
    status, reply = await world.call("org_admin", "POST", "/v2/jobs", json=body)
    assert status == 409 and "2 jobs running" in reply["message"], reply
    other = {"document": {}, "targets": {"tags": ["x"]}, "continuous": True}
    status, reply = await world.call("other_admin", "POST", "/v2/jobs", json=other)
    assert status == 201, reply
    status, _ = await world.call("org_admin", "POST", f"/v2/jobs/{first['id']}/cancel", json={})
    assert status == 200
    await new_job(world, {"targets": {"device_ids": pumps}})


async def test_a_succeeded_execution_is_at_100(world: World) -> None:
    pumps = await devices(world, 2)
    job = await new_job(world, {"targets": {"device_ids": pumps}})
    await scheduler(world).tick()
    await report(world, "pump-0", job["id"], {"state": "IN_PROGRESS", "progress": 30})
    refused = await report(world, "pump-0", job["id"], {"state": "SUCCEEDED", "progress": 3}, 400)
    assert refused["message"].startswith("progress:")
    done = await report(world, "pump-0", job["id"], {"state": "SUCCEEDED"})
    assert done["execution"]["progress"] == 100
    done = await report(world, "pump-1", job["id"], {"state": "SUCCEEDED", "progress": 100})
    assert done["execution"]["progress"] == 100


async def test_a_listed_job_carries_its_counts_per_state(world: World) -> None:
    """The list shows each job's progress (the console's bar per state) as its GET does."""
    pumps = await devices(world, 3)
    busy = await new_job(world, {"targets": {"device_ids": pumps}})
    idle = await new_job(world, {"targets": {"device_ids": pumps[:1]}})
    await scheduler(world).tick()
    await report(world, "pump-0", busy["id"], {"state": "SUCCEEDED"})
    status, reply = await world.call("org_admin", "GET", "/v2/jobs?limit=1&order_by=created_date")
    assert status == 200 and [j["id"] for j in reply["jobs"]] == [busy["id"]]
    status, reply = await world.call("org_admin", "GET", "/v2/jobs")
    listed = {j["id"]: j["counts"] for j in reply["jobs"]}
    assert listed[busy["id"]] == (await job_of(world, busy["id"]))["counts"]
    assert listed[busy["id"]]["SUCCEEDED"] == 1 and listed[busy["id"]]["QUEUED"] == 2
    assert listed[idle["id"]]["QUEUED"] == 1 and sum(listed[idle["id"]].values()) == 1


async def test_the_job_lists_are_pages_of_the_shared_list_model(world: World) -> None:
    status, document = await world.call("anonymous", "GET", "/v2/openapi.json")
    assert status == 200
    schemas = document["components"]["schemas"]
    for name, key, item in (
        ("JobList", "jobs", "Job"),
        ("JobExecutionList", "executions", "JobExecution"),
        ("DeviceExecutionList", "executions", "DeviceExecution"),
    ):
        properties = schemas[name]["properties"]
        assert properties[key]["items"] == {"$ref": f"#/components/schemas/{item}"}
        assert properties["last_evaluated_key"]["type"] == "object"
        assert {"object_count", "page_count"} <= set(properties)


async def test_notices_yield_the_loop_between_chunks(world: World) -> None:
    """Telling many devices leaves the loop to others between chunks of CHUNK devices."""
    others = [0]

    async def another_task() -> None:
        while True:
            others[0] += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(another_task())
    await asyncio.sleep(0)
    before = others[0]
    devices = {f"nobody{i:05d}" for i in range(3 * notices.CHUNK)}
    await world.site.services.jobs.notices.tell(Changes(devices=devices))
    ran = others[0] - before
    task.cancel()
    assert ran >= 3


async def test_notices_read_each_job_once_per_batch(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    pumps = await devices(world, 5)
    job = await new_job(world, {"targets": {"device_ids": pumps}})
    await scheduler(world).tick()
    read = calls_of(monkeypatch, job_store, "core")
    await world.site.services.jobs.notices.tell(Changes(devices=set(pumps)))
    assert read == [job["id"]]


async def device_pages(world: World, device_id: str, **query: Any) -> list[dict[str, Any]]:
    """Every page of a device's executions, `limit` at a time, following the keys."""
    path, pages, after = f"/v2/devices/{device_id}/executions", [], None
    while True:
        asked = {**query, **({"last_evaluated_key": json.dumps(after)} if after else {})}
        status, reply = await world.call("org_admin", "GET", path, params=asked)
        assert status == 200, reply
        pages.append(reply)
        after = reply.get("last_evaluated_key")
        if after is None:
            return pages


async def test_a_devices_executions_newest_first_paged_and_filtered(world: World) -> None:
    """Jobs made in the same instant (the clock frozen) page by job ID, none twice."""
    device_id = world.id("device_member")
    clock.freeze()
    made = [
        await new_job(world, {"targets": {"device_ids": [device_id]}, "description": f"fw {i}"})
        for i in range(5)
    ]
    clock.advance(timedelta(seconds=1))
    newest = await new_job(world, {"targets": {"device_ids": [device_id]}})
    await new_job(world, {"targets": {"device_ids": [world.id("device_loner")]}})  # not it
    await scheduler(world).tick()
    await report(world, "device_member", newest["id"], {"state": "SUCCEEDED"})
    pages = await device_pages(world, device_id, limit="2")
    shown = [e for page in pages for e in page["executions"]]
    assert [len(p["executions"]) for p in pages] == [2, 2, 2]
    assert shown[0]["job_id"] == newest["id"] and shown[0]["job_state"] == "COMPLETED"
    rest = sorted(made, key=lambda j: j["id"], reverse=True)
    assert [e["job_id"] for e in shown[1:]] == [j["id"] for j in rest]
    assert {e["job_description"] for e in shown[1:]} == {f"fw {i}" for i in range(5)}
    assert {e["device_id"] for e in shown} == {device_id}
    pages = await device_pages(world, device_id, state="SUCCEEDED")
    assert [e["job_id"] for e in pages[0]["executions"]] == [newest["id"]]
    pages = await device_pages(world, device_id, desc="false", limit="10")
    assert [e["job_id"] for e in pages[0]["executions"]][-1] == newest["id"]
    status, reply = await world.call(
        "org_admin", "GET", f"/v2/devices/{device_id}/executions", params={"object_count": "true"}
    )
    assert status == 200 and reply == {"object_count": 6}
    status, reply = await world.call(
        "org_admin", "GET", f"/v2/devices/{device_id}/executions", params={"status": "x"}
    )
    assert status == 400 and "status" in reply["message"], reply


@pytest.mark.parametrize("who", ["org_admin", "plain"])
async def test_a_job_get_reads_the_job_once(
    world: World, monkeypatch: pytest.MonkeyPatch, who: str
) -> None:
    """GET /v2/jobs/{id} reads the job once: the read that checks the caller is the one
    shown (it read it twice, #31); who may not read it still gets a 404."""
    job = await new_job(world, {"targets": {"device_ids": [world.id("device_member")]}})
    read = calls_of(monkeypatch, job_store, "get")
    status, reply = await world.call(who, "GET", f"/v2/jobs/{job['id']}")
    if who == "plain":
        assert status == 404 and reply == {"message": "Job not found"}
    else:
        assert status == 200 and reply["job"]["counts"]["QUEUED"] == 1
    assert read == [job["id"]]


# -- who a job may reach (docs/jobs.md, "Who may") -------------------------------------------
async def fw_job(world: World, who: str) -> str:
    """A continuous job over the tag `fw` in Apollo, made by `who`."""
    body = {"targets": {"tags": ["fw"]}, "continuous": True, "project_id": world.project_id}
    return str((await new_job(world, body, who))["id"])


async def admin_device(world: World, how: str) -> str:
    """An Apollo device with the tag `fw` that is an org admin, its access rows written
    after its own row: made so, or put back from the trash. Its key in `executions`."""
    if how == "made":
        body = {"name": "boss2", "project_id": world.project_id, "tags": ["fw"]}
        body["org_permissions"] = {"is_admin": True}
        status, reply = await world.call("org_admin", "POST", "/v2/devices", json=body)
        assert status == 201, reply
        return str(reply["device"]["id"])
    boss = world.id("device_boss")
    for method, path, body in (
        ("PATCH", f"/v2/devices/{boss}", {"tags": ["fw"]}),
        ("DELETE", f"/v2/devices/{boss}", None),
        ("POST", f"/v2/trash/{boss}/restore", None),
    ):
        status, reply = await world.call("org_admin", method, path, json=body)
        assert status in (200, 201, 204), (path, reply)
    return "device_boss"


def refused(found: dict[str, dict[str, Any]], name: str) -> bool:
    """The device's execution ended REMOVED, unreleased, saying why."""
    execution = found[name]
    return (
        execution["state"] == "REMOVED"
        and "released_date" not in execution
        and execution["status_details"] == {"reason": "device_is_admin"}
    )


@pytest.mark.parametrize("how", ["made", "restored"])
async def test_a_project_admins_job_never_reaches_an_org_admin_device(
    world: World, how: str
) -> None:
    """A device whose admin access comes after its row joins no job its maker may not
    update it by: the project admin's continuous job ends its execution REMOVED, and an
    org admin's reaches it."""
    mine, boss_made = await fw_job(world, "project_admin"), await fw_job(world, "org_admin")
    await world.add_device("plain", project_id=world.project_id, tags=["fw"])
    boss = await admin_device(world, how)
    assert refused(await executions(world, mine), boss)  # when its admin access came
    await scheduler(world).tick()
    found = await executions(world, mine)
    assert refused(found, boss) and "plain" in released(found)
    assert {boss, "plain"} <= released(await executions(world, boss_made))


async def test_a_device_made_an_org_admin_after_it_joined_is_not_released_the_job(
    world: World,
) -> None:
    """The rule is asked at release: a queued device given a role that is an org admin
    since it joined is not released a project admin's job, which ends it REMOVED; an org
    admin's job is released to it."""
    mine, boss_made = await fw_job(world, "project_admin"), await fw_job(world, "org_admin")
    dev = await world.add_device("late", project_id=world.project_id, tags=["fw"])
    await world.add_device("plain", project_id=world.project_id, tags=["fw"])
    role = await world.new_role(name="Org admins")
    await world.grant("org", world.tenant.org_id, role, "role", is_admin=True)
    await world.grant("role", role, dev, "device")
    assert (await executions(world, mine))["late"]["state"] == "QUEUED"
    await scheduler(world).tick()
    found = await executions(world, mine)
    assert refused(found, "late") and "plain" in released(found)
    assert (await job_of(world, mine))["counts"]["REMOVED"] == 1
    assert {"late", "plain"} <= released(await executions(world, boss_made))
    status, pending = await world.call("late", "GET", f"/v2/devices/{dev}/jobs")
    assert status == 200 and [p["job_id"] for p in pending["jobs"]] == [boss_made]


async def test_a_device_made_a_project_admin_leaves_only_continuous_jobs(world: World) -> None:
    """Made Apollo's admin while it waits, a device leaves the project admin's continuous
    job (the join's rule); Apollo's admin may still update it, so its snapshot job over
    the device is released to it."""
    dev = await world.add_device("late", project_id=world.project_id, tags=["fw"])
    mine = await fw_job(world, "project_admin")
    body = {"targets": {"device_ids": [dev]}}
    snapshot = str((await new_job(world, body, "project_admin"))["id"])
    await world.grant("project", world.project_id, dev, "device", is_admin=True)
    assert refused(await executions(world, mine), "late")
    await scheduler(world).tick()
    assert released(await executions(world, snapshot)) == {"late"}


async def set_access(world: World, group_id: str, device_id: str, on: bool) -> None:
    path = f"/v2/groups/{group_id}/access/{device_id}"
    status, reply = await world.call("org_admin", "PATCH", path, json={"is_active": on})
    assert status == 200, reply


async def test_inactive_group_access_is_no_membership_for_a_snapshot(world: World) -> None:
    """An org admin's job over Ward leaves out a device whose access is off; a group
    admin's job over its group takes its active members and is not refused for a device
    it cannot see."""
    ward = world.org_group_id
    await set_access(world, ward, world.id("device_member"), False)
    job = await new_job(world, {"targets": {"group_id": ward}})
    assert set(await executions(world, job["id"])) == {"device_boss"}
    pumps = await world.new_group(name="Pumps")
    await world.grant("group", pumps, world.id("group_admin"), "user", is_admin=True)
    on, off = await world.add_device("on"), await world.add_device("off")
    for device in (on, off):
        await world.grant("group", pumps, device, "device")
    await set_access(world, pumps, off, False)
    job = await new_job(world, {"targets": {"group_id": pumps}}, "group_admin")
    assert set(await executions(world, job["id"])) == {"on"}


async def test_a_continuous_group_job_takes_access_when_it_is_active(world: World) -> None:
    """A member whose access is off is not taken when the job is made, nor when its access
    comes back (off) with it from the trash; turned on, it joins the job."""
    ward, late = world.org_group_id, await world.add_device("late")
    await world.grant("group", ward, late, "device")
    await set_access(world, ward, late, False)
    job = await new_job(world, {"targets": {"group_id": ward}, "continuous": True})
    before = set(await executions(world, job["id"]))
    assert "late" not in before
    for method, path in (("DELETE", f"/v2/devices/{late}"), ("POST", f"/v2/trash/{late}/restore")):
        status, reply = await world.call("org_admin", method, path)
        assert status in (200, 201, 204), (path, reply)
    assert set(await executions(world, job["id"])) == before
    await set_access(world, ward, late, True)
    assert set(await executions(world, job["id"])) == before | {"late"}
    await scheduler(world).tick()
    assert "late" in released(await executions(world, job["id"]))
