"""`edge agent` running jobs, as a separate process against the real server (with its
scheduler and MQTT broker) as device_member: a job with a firmware artifact goes through
the configured handler to SUCCEEDED, a failing handler to FAILED, an artifact altered on
the way is refused by its SHA-256 before any handler runs, a download the agent was
killed in is resumed with `Range`, an outcome made while the server was down reaches it
once it is back, and a handler the agent was killed running is not run twice.

The artifact's presigned URL points at the server's `public_url`: here a small proxy in
front of the server (`Proxy`), as a reverse proxy would be, which sees each request's
`Range` and can alter the bytes or hold the answer halfway."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from edge.kernel.config import Config
from tests.edge_agent.processes import AgentProcess, Served, true, until
from tests.ports import free_port
from tests.world import World

DEVICE = "device_member"
FIRMWARE = os.urandom(256 * 1024)


def proxy_url(request: pytest.FixtureRequest) -> str:
    """The server's public URL: the test's proxy, on a port chosen before the server is."""
    if not hasattr(request.node, "proxy_port"):
        request.node.proxy_port = free_port()
    return f"http://127.0.0.1:{request.node.proxy_port}"


pytestmark = [
    pytest.mark.slow,
    pytest.mark.world("content", mqtt_port=lambda _: free_port(), public_url=proxy_url),
]

HANDLER = """
import hashlib, json, os, sys, time, urllib.request
document = json.load(sys.stdin)
folder = os.path.dirname(os.path.abspath(__file__))
artifact = os.environ.get("EDGE_JOB_ARTIFACT")
digest = hashlib.sha256(open(artifact, "rb").read()).hexdigest() if artifact else None
with open(os.path.join(folder, "ran.jsonl"), "a") as log:
    log.write(json.dumps({"job_id": os.environ["EDGE_JOB_ID"], "sha256": digest}) + "\\n")
print(json.dumps({"progress": 50, "status_details": {"flashing": True}}), flush=True)
if document.get("bump"):  # the device's own tool updates the execution behind the agent
    bump = document["bump"]
    key = open(os.path.join(folder, "api_key")).read().strip()
    url = f"{bump['server']}/v2/devices/{bump['device']}/jobs/{os.environ['EDGE_JOB_ID']}"

    def call(method, body=None):
        data = json.dumps(body).encode() if body else None
        headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
        request = urllib.request.Request(url, data, headers, method=method)
        return json.load(urllib.request.urlopen(request))["execution"]

    call("PATCH", {"state": "IN_PROGRESS", "status_details": {"by": "another tool"}})
    print(json.dumps({"progress": 60}), flush=True)
    for _ in range(400):  # the agent's report lands despite the version it held
        execution = call("GET")
        if execution["progress"] == 60 and execution["status_details"].get("step") == "handler":
            break
        time.sleep(0.05)
    else:
        sys.exit(5)
if document.get("wait"):
    with open(os.path.join(folder, "running"), "w") as running:
        running.write(str(os.getpid()))
    while not os.path.exists(os.path.join(folder, "release")):
        time.sleep(0.05)
if document.get("fail"):
    print(json.dumps({"status_details": {"error": "flash failed"}}))
    sys.exit(3)
print(json.dumps({"status_details": {"installed": document.get("version")}}))
"""


@dataclass
class Proxy:
    """The server's public URL: passes GETs on to the server, noting each `Range` asked
    for; `alter` flips a byte of what it passes; `hold_after` sends that many bytes of
    the answer, then waits on `release`."""

    upstream: str
    ranges: list[str | None] = field(default_factory=list)
    alter: bool = False
    hold_after: int | None = None
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.ranges.append(request.headers.get("Range"))
        headers = {"Range": request.headers["Range"]} if "Range" in request else {}
        async with (
            aiohttp.ClientSession() as session,
            session.get(self.upstream + request.path_qs, headers=headers) as upstream,
        ):
            body = await upstream.read()
            kept = {k: v for k, v in upstream.headers.items() if k in ("Content-Range", "ETag")}
            status = upstream.status
        if self.alter:
            body = bytes([body[0] ^ 0xFF]) + body[1:]
        response = web.StreamResponse(status=status, headers=kept)
        response.content_length = len(body)
        await response.prepare(request)
        if self.hold_after is not None and len(body) > self.hold_after:
            await response.write(body[: self.hold_after])
            await self.release.wait()
            body = body[self.hold_after :]
        await response.write(body)
        return response


@dataclass
class Device:
    served: Served
    agent: AgentProcess
    folder: Path
    proxy: Proxy

    @property
    def world(self) -> World:
        assert self.served.world is not None
        return self.served.world

    @property
    def ran(self) -> list[dict[str, Any]]:
        log = self.folder / "ran.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    async def job(self, artifact: bytes | None = FIRMWARE, **document: Any) -> str:
        body: dict[str, Any] = {
            "document": {"version": "2.0", **document},
            "targets": {"device_ids": [self.world.id(DEVICE)]},
        }
        if artifact is not None:
            status, reply = await self.world.upload("org_admin", "/fw/pump.bin", artifact)
            assert status == 200, reply
            body["artifact"] = {"group_id": self.world.files_group_id, "path": "fw/pump.bin"}
        status, reply = await self.world.call("org_admin", "POST", "/v2/jobs", json=body)
        assert status == 201, reply
        return str(reply["job"]["id"])

    async def execution(self, job_id: str) -> dict[str, Any]:
        path = f"/v2/jobs/{job_id}/executions/{self.world.id(DEVICE)}"
        status, reply = await self.world.call("org_admin", "GET", path)
        assert status == 200, reply
        return dict(reply["execution"])

    async def ended(self, job_id: str) -> dict[str, Any]:
        """The execution once the agent ended it (a bound, not a measure)."""

        async def done() -> bool:
            return (await self.execution(job_id))["state"] not in ("QUEUED", "IN_PROGRESS")

        await until(done, f"job {job_id} ended")
        return await self.execution(job_id)

    def record(self, job_id: str) -> Path:
        return self.folder / "state" / "jobs" / f"{job_id}.json"

    def part(self, job_id: str) -> Path:
        return self.folder / "state" / "downloads" / f"{job_id}.part"


def write_config(folder: Path, served: Served, root: str) -> Path:
    (folder / "handler.py").write_text(HANDLER)
    key_file = folder / "api_key"
    key_file.write_text(served.template.keys[DEVICE] + "\n")
    key_file.chmod(0o600)
    config = folder / "agent.toml"
    config.write_text(
        f"""
server = "{served.base}"
mqtt = "mqtt://127.0.0.1:{served.config.mqtt_port}"
device_id = "{served.template.id(DEVICE)}"
root_scope = "{root}"
state_dir = "state"

[credentials]
api_key_file = "api_key"

[reconnect]
min_seconds = 0.1
max_seconds = 0.5

[jobs]
handler = ["{sys.executable}", "{folder / "handler.py"}"]
timeout_seconds = 20
"""
    )
    return config


@pytest.fixture
async def device(
    aiohttp_server: Any,
    aiohttp_client: Any,
    config: Config,
    content_world_template: World,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> AsyncIterator[Device]:
    from edge.devices.topics import root_scope

    served = Served(config, content_world_template, aiohttp_server, aiohttp_client)
    row = (await served.start()).device(DEVICE)
    proxy = Proxy(served.base)
    app = web.Application()
    app.router.add_get("/{tail:.*}", proxy.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", request.node.proxy_port).start()
    folder = tmp_path / "agent"
    folder.mkdir()
    agent = AgentProcess(write_config(folder, served, root_scope(row.org_id, row.project_id)))
    try:
        yield Device(served, agent, folder, proxy)
    finally:
        proxy.release.set()
        if agent.process is not None and agent.process.returncode is None:
            agent.process.kill()
            await agent.process.wait()
        await runner.cleanup()


async def started(device: Device) -> None:
    await device.agent.start()
    await device.agent.line("connected, waiting on")


async def test_a_job_with_an_artifact_succeeds_and_a_failing_handler_fails(
    device: Device,
) -> None:
    await started(device)
    job_id = await device.job()
    await device.agent.line(f"job {job_id}: SUCCEEDED")
    execution = await device.ended(job_id)
    assert execution["state"] == "SUCCEEDED" and execution["progress"] == 100
    assert execution["status_details"] == {"installed": "2.0"}
    # The handler had the artifact whole, checked, at the path it was given.
    assert device.ran == [{"job_id": job_id, "sha256": hashlib.sha256(FIRMWARE).hexdigest()}]
    assert device.proxy.ranges == [None]  # one download, from the start
    assert not device.record(job_id).exists()  # the server took the outcome: nothing kept
    failing = await device.job(artifact=None, fail=True)
    await device.agent.line(f"job {failing}: FAILED")
    execution = await device.ended(failing)
    assert execution["status_details"] == {
        "error": "flash failed",
        "reason": "handler_failed",
        "message": f"{sys.executable}: exited with code 3",
    }
    assert device.ran[-1] == {"job_id": failing, "sha256": None}  # no artifact: no path
    assert await device.agent.stop() == 0


async def test_an_artifact_altered_on_the_way_is_refused_before_the_handler_runs(
    device: Device,
) -> None:
    device.proxy.alter = True
    await started(device)
    job_id = await device.job()
    execution = await device.ended(job_id)
    assert execution["state"] == "FAILED"
    details = execution["status_details"]
    assert details["reason"] == "checksum_mismatch", details
    assert hashlib.sha256(FIRMWARE).hexdigest() in details["message"]
    assert device.ran == []  # the handler never saw it
    downloads = device.folder / "state" / "downloads"
    assert list(downloads.iterdir()) == []  # the bad file is discarded
    await device.agent.said(f"job {job_id}: the artifact's SHA-256 is")
    assert await device.agent.stop() == 0


async def test_a_download_the_agent_was_killed_in_is_resumed_with_range(device: Device) -> None:
    big = os.urandom(3 * 1024 * 1024)
    held = 1024 * 1024
    device.proxy.hold_after = held
    await started(device)
    job_id = await device.job(artifact=big)
    part = device.part(job_id)
    await until(lambda: true(part.exists() and part.stat().st_size == held), "half is here")
    assert part.stat().st_mode & 0o777 == 0o600
    assert await device.agent.stop(signal.SIGKILL) == -signal.SIGKILL
    device.proxy.hold_after = None
    device.proxy.release.set()
    await started(device)
    await device.agent.line(f"job {job_id}: SUCCEEDED")
    assert device.proxy.ranges[0] is None
    assert device.proxy.ranges[-1] == f"bytes={held}-"  # it asked for the rest alone
    assert device.ran == [{"job_id": job_id, "sha256": hashlib.sha256(big).hexdigest()}]
    assert await device.agent.stop() == 0


async def test_an_outcome_made_while_the_server_is_down_reaches_it_when_back(
    device: Device,
) -> None:
    await started(device)
    job_id = await device.job(wait=True)
    running = device.folder / "running"
    await until(lambda: true(running.exists()), "the handler runs")
    await device.served.stop()
    (device.folder / "release").touch()  # the handler ends while nobody can be told
    record = device.record(job_id)
    await until(lambda: true(record.exists() and "outcome" in record.read_text()), "kept")
    assert record.stat().st_mode & 0o777 == 0o600
    assert json.loads(record.read_text())["outcome"]["state"] == "SUCCEEDED"
    await device.served.start()  # same folder, same ports
    await device.agent.line(f"job {job_id}: SUCCEEDED")
    assert (await device.ended(job_id))["state"] == "SUCCEEDED"
    assert not record.exists()
    assert len(device.ran) == 1
    assert await device.agent.stop() == 0


@pytest.mark.parametrize("idempotent", [False, True])
async def test_a_handler_the_agent_was_killed_running_runs_again_only_if_idempotent(
    device: Device, idempotent: bool
) -> None:
    if idempotent:
        with device.agent.config_file.open("a") as config:
            config.write("idempotent = true\n")  # the last section is [jobs]
    await started(device)
    job_id = await device.job(artifact=None, wait=True)
    running = device.folder / "running"
    await until(lambda: true(running.exists()), "the handler runs")
    assert await device.agent.stop(signal.SIGKILL) == -signal.SIGKILL
    os.kill(int(running.read_text()), signal.SIGKILL)  # the handler it left behind
    (device.folder / "release").touch()  # a second run, if any, ends at once
    await started(device)
    execution = await device.ended(job_id)
    if idempotent:
        assert execution["state"] == "SUCCEEDED" and len(device.ran) == 2
    else:
        assert execution["state"] == "FAILED" and len(device.ran) == 1  # once, before the kill
        assert execution["status_details"]["reason"] == "interrupted"
    assert await device.agent.stop() == 0


async def test_an_update_refused_for_its_version_is_read_again_and_sent(device: Device) -> None:
    """Another program of the device moves the execution on while the handler runs: the
    agent's progress report, sent with the version it held, is a 409; the agent reads the
    execution again and the report lands (the handler waits to see it), then the outcome."""
    await started(device)
    bump = {"server": device.served.base, "device": device.world.id(DEVICE)}
    job_id = await device.job(artifact=None, bump=bump)
    await device.agent.line(f"job {job_id}: SUCCEEDED")
    assert (await device.ended(job_id))["status_details"] == {"installed": "2.0"}
    assert await device.agent.stop() == 0


async def test_an_outcome_of_an_execution_cancelled_meanwhile_is_dropped(device: Device) -> None:
    await started(device)
    job_id = await device.job(artifact=None, wait=True)
    await until(lambda: true((device.folder / "running").exists()), "the handler runs")
    cancel = {"force": True}
    path = f"/v2/jobs/{job_id}/cancel"
    status, reply = await device.world.call("org_admin", "POST", path, json=cancel)
    assert status == 200, reply
    (device.folder / "release").touch()
    await device.agent.said(f"job {job_id}: the server has it CANCELED; the outcome is dropped")
    assert (await device.execution(job_id))["state"] == "CANCELED"
    assert not device.record(job_id).exists()
    assert await device.agent.stop() == 0


async def test_an_empty_artifact_is_handed_over_empty(device: Device) -> None:
    """Nothing to download is a file of no bytes, checked like any other (an agent that
    made no file waited on it for ever)."""
    await started(device)
    job_id = await device.job(artifact=b"")
    await device.agent.line(f"job {job_id}: SUCCEEDED")
    assert device.ran == [{"job_id": job_id, "sha256": hashlib.sha256(b"").hexdigest()}]
    assert await device.agent.stop() == 0
