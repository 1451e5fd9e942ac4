"""`edge agent` as a separate process against the real server (in this process, on a free
loopback port, with its real MQTT broker), as device_member of tests/world.py with its
API key: the twin's desired applied through the configured program and reported, the
local file reported, a command answered through the configured handler, a tunnel
carrying bytes to a real TCP service; the server stopped and started again on the same
ports and folder, the agent SIGKILLed and started again, each time catching up with what
changed while it was away. Waits are bounded (a failure, never a measure of speed)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from edge.devices.topics import root_scope
from edge.kernel.config import Config
from tests.edge_agent.processes import BOUND, AgentProcess, Served, true, until
from tests.ports import free_port
from tests.world import World

DEVICE = "device_member"

pytestmark = [pytest.mark.slow, pytest.mark.world(mqtt_port=lambda _: free_port())]

APPLY = """
import json, sys
given = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(given) + "\\n")
if given["delta"].get("fail"):
    sys.exit(3)
"""
HANDLER = """
import json, os, sys, time
command = json.load(sys.stdin)
if command["name"] == "crash":
    sys.exit(1)
folder = os.path.dirname(os.path.abspath(__file__))
if command["name"] == "slow" and not os.path.exists(os.path.join(folder, "release")):
    with open(os.path.join(folder, "slow.pid"), "w") as started:
        started.write(str(os.getpid()))
    time.sleep(600)
print(json.dumps({"status": 201, "payload": {"echo": command["payload"], "name": command["name"]}}))
"""


@dataclass
class Device:
    served: Served
    agent: AgentProcess
    folder: Path  # the agent's files
    echo_port: int

    @property
    def world(self) -> World:
        assert self.served.world is not None
        return self.served.world

    @property
    def reported_file(self) -> Path:
        return self.folder / "state" / "reported.json"

    @property
    def applied(self) -> list[dict[str, Any]]:
        log = self.folder / "applied.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    async def twin(self) -> dict[str, Any]:
        status, body = await self.world.call("org_admin", "GET", self._path("twin"))
        assert status == 200, body
        return dict(body["twin"])

    async def desire(self, **desired: Any) -> None:
        path = self._path("twin")
        status, body = await self.world.call("org_admin", "PATCH", path, json={"desired": desired})
        assert status == 200, body

    async def command(self, name: str, **body: Any) -> tuple[int, Any]:
        body = {"name": name, "payload": {"n": 1}, "timeout": 20, **body}
        return await self.world.call("org_admin", "POST", self._path("commands"), json=body)

    async def answered(self, request_id: str) -> bool:
        status, body = await self.world.call(
            "org_admin", "GET", self._path(f"commands/{request_id}")
        )
        assert status == 200, body
        return bool(body["command"]["state"] == "answered")

    def _path(self, what: str) -> str:
        return f"/v2/devices/{self.world.id(DEVICE)}/{what}"


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    writer.close()


def write_config(folder: Path, served: Served, root: str, echo_port: int) -> Path:
    (folder / "apply.py").write_text(APPLY)
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

[twin]
apply = ["{sys.executable}", "{folder / "apply.py"}", "{folder / "applied.jsonl"}"]
poll_seconds = 0.1

[commands]
handler = ["{sys.executable}", "{folder / "handler.py"}"]
timeout_seconds = 15

[tunnels.services]
ECHO = "{echo_port}"
"""
    )
    return config


@pytest.fixture
async def device(
    aiohttp_server: Any,
    aiohttp_client: Any,
    config: Config,
    world_template: World,
    tmp_path: Path,
) -> AsyncIterator[Device]:
    served = Served(config, world_template, aiohttp_server, aiohttp_client)
    row = (await served.start()).device(DEVICE)
    echo_server = await asyncio.start_server(echo, "127.0.0.1", 0)
    folder = tmp_path / "agent"
    folder.mkdir()
    echo_port = echo_server.sockets[0].getsockname()[1]
    root = root_scope(row.org_id, row.project_id)
    agent = AgentProcess(write_config(folder, served, root, echo_port))
    try:
        yield Device(served, agent, folder, echo_port)
    finally:
        if agent.process is not None and agent.process.returncode is None:
            agent.process.kill()
            await agent.process.wait()
        echo_server.close()


async def synced(device: Device, reported: dict[str, Any]) -> None:
    """Until the twin's `reported` is this and nothing is left to apply."""

    async def check() -> bool:
        twin = await device.twin()
        return bool(twin["reported"] == reported and twin["delta"] == {})

    await until(check, f"the twin reports {reported}")


async def started(device: Device) -> None:
    await device.agent.start()
    await device.agent.line("connected, waiting on")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_the_twin_is_applied_reported_and_kept_in_step_with_the_file(
    device: Device,
) -> None:
    device.reported_file.parent.mkdir()
    device.reported_file.write_text(json.dumps({"firmware": "2.1", "old": True}))
    await started(device)
    await synced(device, {"firmware": "2.1", "old": True})
    await device.desire(interval=30, led={"color": "red"})
    await device.agent.line("twin: applied version")
    whole = {"firmware": "2.1", "old": True, "interval": 30, "led": {"color": "red"}}
    await synced(device, whole)
    assert json.loads(device.reported_file.read_text()) == whole
    assert [entry["delta"] for entry in device.applied] == [
        {"interval": 30, "led": {"color": "red"}}
    ]
    assert mode(device.reported_file) == 0o600 and mode(device.reported_file.parent) == 0o700
    # The device changes its own file: the twin follows, a key it dropped is dropped there.
    changed = {"firmware": "2.2", "interval": 30, "led": {"color": "red"}}
    device.reported_file.write_text(json.dumps(changed))
    await synced(device, changed)
    # A program that fails applies nothing: nothing is reported, the delta stays.
    await device.desire(fail=True)
    await until(lambda: true(len(device.applied) == 2), "the program ran")
    twin = await device.twin()
    assert twin["delta"] == {"fail": True} and "fail" not in twin["reported"]
    assert await device.agent.stop() == 0


async def test_a_command_is_answered_by_the_handler(device: Device) -> None:
    await started(device)
    status, body = await device.command("ping", payload={"x": [1, 2]})
    assert status == 200, body
    reply = {"status": 201, "payload": {"echo": {"x": [1, 2]}, "name": "ping"}}
    assert body["command"]["state"] == "answered" and body["command"]["reply"] == reply
    status, body = await device.command("crash")  # the handler exits 1: the caller learns
    assert status == 200 and body["command"]["reply"]["status"] == 500
    assert "exited with code 1" in body["command"]["reply"]["payload"]["error"]
    assert await device.agent.stop() == 0


async def test_a_tunnel_carries_bytes_to_the_device_service(device: Device) -> None:
    await started(device)
    path = f"/v2/devices/{device.world.id(DEVICE)}/tunnels"
    status, body = await device.world.call("org_admin", "POST", path, json={"services": ["ECHO"]})
    assert status == 201, body
    tunnel = body["tunnel"]
    await device.agent.line(f"tunnel {tunnel['uuid']}: connected")
    sent = os.urandom(300_000)
    headers = {"Authorization": f"Bearer {tunnel['client_access_token']}"}
    url = f"{device.served.base}/v2/tunnels/{tunnel['uuid']}/connect?service=ECHO"
    async with aiohttp.ClientSession() as session, session.ws_connect(url, headers=headers) as ws:
        for start in range(0, len(sent), 65536):
            await ws.send_bytes(sent[start : start + 65536])
        got = b""
        async with asyncio.timeout(BOUND):
            while len(got) < len(sent):
                got += await ws.receive_bytes()
    assert got == sent
    assert await device.agent.stop() == 0


async def test_the_agent_catches_up_after_the_server_restarts(device: Device) -> None:
    await started(device)
    await synced(device, {})
    await device.served.stop()
    device.reported_file.write_text(json.dumps({"while": "down"}))  # nobody to tell yet
    await device.served.start()  # same folder, same ports
    await device.agent.line("connected, waiting on")  # it came back on its own
    await synced(device, {"while": "down"})
    await device.desire(after="restart")
    await synced(device, {"while": "down", "after": "restart"})
    status, body = await device.command("ping")
    assert status == 200 and body["command"]["reply"]["status"] == 201, body
    assert await device.agent.stop() == 0


async def test_a_killed_agent_started_again_catches_up(device: Device) -> None:
    await started(device)
    await synced(device, {})
    assert await device.agent.stop(signal.SIGKILL) == -signal.SIGKILL
    await device.desire(while_away=1)  # kept in the twin
    status, body = await device.command("queued", queue=True, ttl=120)  # kept in its session
    assert status == 202, body
    request_id = body["command"]["request_id"]
    await started(device)
    await synced(device, {"while_away": 1})
    await until(lambda: device.answered(request_id), "the queued command was answered")
    assert await device.agent.stop() == 0


async def test_a_command_the_agent_was_killed_running_is_answered_after_its_restart(
    device: Device,
) -> None:
    """The agent acknowledges a command only once answered: killed while its handler ran,
    the broker delivers the command again and the agent started again answers it."""
    await started(device)
    status, body = await device.command("slow", queue=True, ttl=120)
    assert status == 202, body
    request_id, pid_file = body["command"]["request_id"], device.folder / "slow.pid"
    await until(lambda: true(pid_file.exists() and pid_file.read_text() != ""), "it runs")
    assert await device.agent.stop(signal.SIGKILL) == -signal.SIGKILL
    os.kill(int(pid_file.read_text()), signal.SIGKILL)  # the handler it left behind
    (device.folder / "release").touch()  # the second time, the handler answers
    await started(device)
    await until(lambda: device.answered(request_id), "the command was answered after the restart")
    assert await device.agent.stop() == 0


async def test_after_a_refused_report_the_next_change_is_reported_whole(device: Device) -> None:
    """A report the server refuses (over twin_max_bytes) is not taken as the twin's state:
    the next change of the file is reported against what the server holds."""
    await started(device)
    await synced(device, {})
    device.reported_file.write_text(json.dumps({"a": 1, "big": "x" * 9000}))
    await device.agent.said("twin: the server refused update: twin: the document would be")
    device.reported_file.write_text(json.dumps({"a": 1}))
    await synced(device, {"a": 1})
    assert await device.agent.stop() == 0
