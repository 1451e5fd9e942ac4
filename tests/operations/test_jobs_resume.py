"""A rollout resumed across a SIGKILL of a real `edge serve` (docs/jobs.md, "Rollout"):
what the scheduler released before the kill is still released, once, with its release
time; nothing more is released than the policy allows; what the devices reported is kept;
and after the restart the rollout goes on to its end."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.crash import Edge, token
from bench.crash_load import Http

WAIT = 30.0  # seconds at most for what the scheduler does on its own (a bound, not a timing)


def until(found: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if value := found():
            return value
        time.sleep(0.05)
    raise AssertionError("the scheduler never got there")


def executions(http: Http, job_id: str) -> dict[str, dict[str, Any]]:
    reply = http.call("GET", f"/v2/jobs/{job_id}/executions")
    return {e["device_id"]: e for e in reply["executions"]}


def released(http: Http, job_id: str) -> dict[str, str]:
    return {
        d: e["released_date"] for d, e in executions(http, job_id).items() if "released_date" in e
    }


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_rollout_resumes_across_a_sigkill(tmp_path: Path) -> None:
    edge = Edge(tmp_path)
    edge.start()
    try:
        staff = {
            "base": edge.base,
            "password": "crash-test-password-1",
            "org": "",
            "token": token(edge.base),
        }
        Http(staff).call("POST", "/v2/orgs", {"name": "Resume", "alias": "resume"})
        http = Http({**staff, "org": "resume", "token": token(edge.base, scope="resume")})
        keys = {}
        for i in range(4):
            made = http.call("POST", "/v2/devices", {"name": f"pump-{i}"})["device"]
            keys[made["id"]] = made["api_key"]
        body = {
            "document": {"fw": "4"},
            "targets": {"device_ids": list(keys)},
            "policy": {"max_in_progress": 2},
        }
        job_id = http.call("POST", "/v2/jobs", body)["job"]["id"]
        first = until(lambda: (r := released(http, job_id)) and len(r) == 2 and r)
        one = sorted(first)[0]
        path = f"/v2/devices/{one}/jobs/{job_id}"
        status, _ = http.send("PATCH", path, {"state": "IN_PROGRESS", "progress": 30}, keys[one])
        assert status == 200
        edge.kill()
        edge.start()
        after = released(http, job_id)
        assert after == first  # released once, at the same time; nothing more
        assert executions(http, job_id)[one]["progress"] == 30  # the device's report stays
        for device in first:
            path = f"/v2/devices/{device}/jobs/{job_id}"
            status, _ = http.send("PATCH", path, {"state": "SUCCEEDED"}, keys[device])
            assert status == 200
        rest = until(lambda: (r := released(http, job_id)) and len(r) == 4 and r)
        edge.kill()
        edge.start()
        for device in set(rest) - set(first):
            path = f"/v2/devices/{device}/jobs/{job_id}"
            status, reply = http.send("PATCH", path, {"state": "SUCCEEDED"}, keys[device])
            assert status == 200, reply
        job = http.call("GET", f"/v2/jobs/{job_id}")["job"]
        assert job["state"] == "COMPLETED" and job["counts"]["SUCCEEDED"] == 4
    finally:
        edge.stop()
