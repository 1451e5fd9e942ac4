"""Jobs and their executions are in a backup taken while serving and come back with
`edge restore` (docs/jobs.md, "Backups"), with the scheduler's state: what was released
stays released, and the rollout goes on from there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edge.app import create_app
from edge.ops import backup
from tests.conftest import Api
from tests.factory import new_site
from tests.tenants import new_tenant


async def test_a_job_is_backed_up_and_restored(aiohttp_client: Any, tmp_path: Path) -> None:
    first = new_site(tmp_path / "site", jobs_tick_seconds=3600)
    api = Api(await aiohttp_client(create_app(first)))
    tenant = await new_tenant(first, api)
    admin = await tenant.admin_token()
    devices = []
    for name in ("pump", "valve"):
        status, made = await api.call("POST", "/v2/devices", admin, json={"name": name})
        assert status == 201, made
        devices.append(made["device"])
    body = {
        "document": {"fw": "5"},
        "targets": {"device_ids": [d["id"] for d in devices]},
        "policy": {"max_in_progress": 1},
    }
    status, made = await api.call("POST", "/v2/jobs", admin, json=body)
    assert status == 201, made
    job_id = made["job"]["id"]
    await first.services.job_scheduler.tick()
    status, before = await api.call("GET", f"/v2/jobs/{job_id}/executions", admin)
    assert sum("released_date" in e for e in before["executions"]) == 1
    backup.backup(tmp_path / "site", tmp_path / "copy", echo=lambda _: None)  # live
    await api.client.close()

    backup.restore(tmp_path / "copy", tmp_path / "restored", force=False, echo=lambda _: None)
    second = new_site(tmp_path / "restored", jobs_tick_seconds=3600)
    again = Api(await aiohttp_client(create_app(second)))
    status, after = await again.call("GET", f"/v2/jobs/{job_id}/executions", admin)
    assert status == 200 and after == before
    await second.services.job_scheduler.tick()  # max_in_progress holds after the restore
    status, job = await again.call("GET", f"/v2/jobs/{job_id}", admin)
    assert job["job"]["counts"]["QUEUED"] == 2 and job["job"]["state"] == "IN_PROGRESS"
    status, still = await again.call("GET", f"/v2/jobs/{job_id}/executions", admin)
    assert sum("released_date" in e for e in still["executions"]) == 1
