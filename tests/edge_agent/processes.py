"""The pieces of the agent's process tests (test_agent_process.py, test_agent_jobs.py,
test_agent_provisioning.py, test_agent_renewal.py): the real server on fixed ports that
can stop and start again on the same folder, a claim to provision a device from, `edge
agent` as a separate process, and bounded waits (a failure, never a measure of speed)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from edge.app import create_app, open_site
from edge.kernel.config import Config
from tests.conftest import Api
from tests.ports import free_port
from tests.world import World

EDGE = str(Path(sys.executable).with_name("edge"))
BOUND = 30.0  # seconds any one wait may take before the test fails
CLAIMS = "/v2/provisioning/claims"
HANDLER = """
import json, sys
command = json.load(sys.stdin)
print(json.dumps({"status": 200, "payload": {"pong": command["payload"]}}))
"""


@dataclass
class Served:
    """The server on fixed ports, so that it can stop and start again where the agent
    expects it; the world bound to whichever run is up."""

    config: Config
    template: World
    new_server: Callable[..., Awaitable[TestServer]]
    new_client: Callable[[TestServer], Awaitable[TestClient]]  # type: ignore[type-arg]
    port: int = field(default_factory=free_port)
    world: World | None = None

    async def start(self) -> World:
        site = open_site(self.config)
        server = await self.new_server(create_app(site), port=self.port)
        self.world = self.template.bound(site, Api(await self.new_client(server)))
        return self.world

    async def stop(self) -> None:
        """Closes the client and its server: the app's cleanup stops the broker and closes
        the database, as SIGTERM would."""
        assert self.world is not None and self.world.api is not None
        await self.world.api.client.close()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class AgentProcess:
    """`edge agent --config FILE`, its standard output read line by line, its standard
    error kept in `agent.err` beside the file."""

    def __init__(self, config_file: Path) -> None:
        self.config_file = config_file
        self.errors = config_file.with_name("agent.err")
        self.process: asyncio.subprocess.Process | None = None
        self.seen: list[str] = []

    async def start(self) -> None:
        self.seen = []
        with self.errors.open("ab") as errors:
            self.process = await asyncio.create_subprocess_exec(
                EDGE,
                "agent",
                "--config",
                str(self.config_file),
                stdout=asyncio.subprocess.PIPE,
                stderr=errors,
                env={k: v for k, v in os.environ.items() if not k.startswith("EDGE_")},
            )

    async def said(self, text: str) -> None:
        """Until its standard error holds `text`."""
        await until(lambda: true(text in self.errors.read_text()), text)

    async def line(self, pattern: str) -> re.Match[str]:
        assert self.process is not None and self.process.stdout is not None
        async with asyncio.timeout(BOUND):
            while True:
                raw = await self.process.stdout.readline()
                assert raw, f"the agent ended; it said {self.seen}"
                self.seen.append(raw.decode().rstrip())
                if found := re.search(pattern, self.seen[-1]):
                    return found

    async def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(sig)
        return await asyncio.wait_for(self.process.wait(), BOUND)


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Wait for something the agent does on its own (a bound on failure, no timing)."""
    async with asyncio.timeout(BOUND):
        while not await check():
            await asyncio.sleep(0.05)


async def true(value: bool) -> bool:
    return value


@dataclass
class Bench:
    """The server, a claim of Clinic, and an empty folder for the device's files."""

    served: Served
    folder: Path
    claim: dict[str, Any]

    @property
    def world(self) -> World:
        assert self.served.world is not None
        return self.served.world

    @property
    def config_file(self) -> Path:
        return self.folder / "agent.toml"

    @property
    def state(self) -> Path:
        return self.folder / "state"

    async def provision(self, *flags: str) -> tuple[int, str, str]:
        """`edge agent provision` into the folder: exit code, standard output and error."""
        tls_port = self.served.config.mqtt_tls_port
        process = await asyncio.create_subprocess_exec(
            EDGE,
            "agent",
            "provision",
            "--config",
            str(self.config_file),
            "--state-dir",
            "state",
            "--mqtt",
            f"mqtts://127.0.0.1:{tls_port}",
            *flags,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), BOUND)
        assert process.returncode is not None
        return process.returncode, out.decode(), err.decode()

    async def uses(self) -> int:
        status, reply = await self.world.call("org_admin", "GET", f"{CLAIMS}/{self.claim['id']}")
        assert status == 200, reply
        return int(reply["claim"]["uses"])

    def answer_commands(self) -> None:
        """Adds a command handler that answers `pong` to the configuration."""
        (self.folder / "handler.py").write_text(HANDLER)
        with self.config_file.open("a") as config:
            config.write(
                f'\n[commands]\nhandler = ["{sys.executable}", "{self.folder / "handler.py"}"]\n'
            )

    async def ping(self, device_id: str) -> None:
        """A command's round trip through the agent: it answers, over MQTT."""
        body = {"name": "ping", "payload": {"n": 7}, "timeout": 20}
        path = f"/v2/devices/{device_id}/commands"
        status, reply = await self.world.call("org_admin", "POST", path, json=body)
        assert status == 200, reply
        assert reply["command"]["reply"] == {"status": 200, "payload": {"pong": {"n": 7}}}
