"""`edge tunnel agent` and `edge tunnel connect` as real processes, end to end: a real TCP
echo service and a real HTTP service behind the agent (which hears of the tunnel over the
real MQTT broker), reached through `edge tunnel connect` from test clients. Bytes arrive
intact both ways on several concurrent streams, half-closes pass through, and closing the
tunnel or its expiry drops the streams; a closed tunnel's token is refused. The tunnels
go to the world's device_member (tests/world.py), opened by Clinic's org admin."""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from edge.app import Site
from edge.devices.topics import root_scope
from edge.kernel import clock
from edge.kernel.config import Config
from tests.conftest import Api
from tests.ports import free_port
from tests.world import World

EDGE = str(Path(sys.executable).with_name("edge"))
LINE_SECONDS = 30.0


pytestmark = pytest.mark.world(mqtt_port=lambda _: free_port(), tunnel_connect_timeout=20)


@dataclass
class Live:
    base: str
    world: World
    mqtt_port: int
    services: dict[str, int] = field(default_factory=dict)  # what the agent offers


@pytest.fixture
async def live(
    aiohttp_server: Any,
    aiohttp_client: Any,
    app: web.Application,
    site: Site,
    config: Config,
    world_template: World,
) -> Live:
    server = await aiohttp_server(app)
    api = Api(await aiohttp_client(server))
    world = world_template.bound(site, api)
    return Live(str(server.make_url("")).rstrip("/"), world, config.mqtt_port)


class Helper:
    """A helper process, read line by line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.seen: list[str] = []

    async def line(self, pattern: str) -> re.Match[str]:
        assert self.process.stdout is not None
        async with asyncio.timeout(LINE_SECONDS):
            while True:
                raw = await self.process.stdout.readline()
                assert raw, f"the helper ended; it said {self.seen}"
                self.seen.append(raw.decode().rstrip())
                found = re.search(pattern, self.seen[-1])
                if found:
                    return found

    async def stop(self) -> int:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(self.process.wait(), LINE_SECONDS)


async def helper(*args: str, env: dict[str, str]) -> Helper:
    process = await asyncio.create_subprocess_exec(
        EDGE,
        "tunnel",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **env},
    )
    return Helper(process)


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    writer.close()  # the client finished sending: so do we


async def http_app() -> web.Application:
    async def hello(request: web.Request) -> web.Response:
        return web.Response(text=f"hello {request.query.get('who', '')}")

    async def digest(request: web.Request) -> web.Response:
        return web.Response(text=hashlib.sha256(await request.read()).hexdigest())

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_get("/hello", hello)
    app.router.add_post("/digest", digest)
    return app


@pytest.fixture
async def services(aiohttp_server: Any) -> AsyncIterator[dict[str, int]]:
    echo_server = await asyncio.start_server(echo, "127.0.0.1", 0)
    web_server = await aiohttp_server(await http_app())
    yield {"ECHO": echo_server.sockets[0].getsockname()[1], "HTTP": web_server.port}
    echo_server.close()


def agent_args(live: Live) -> list[str]:
    """`edge tunnel agent` as device_member, offering the test's services."""
    device = live.world.device("device_member")
    return [
        "agent",
        "--server",
        live.base,
        "--device-id",
        device.id,
        "--root-scope",
        root_scope(device.org_id, device.project_id),
        "--mqtt",
        f"mqtt://127.0.0.1:{live.mqtt_port}",
        *(f"--service={name}={port}" for name, port in live.services.items()),
        "--service=CLOSED=1",  # nothing listens there
    ]


def agent_env(live: Live) -> dict[str, str]:
    return {"EDGE_DEVICE_API_KEY": live.world.keys["device_member"]}


@pytest.fixture
async def agent(live: Live, services: dict[str, int]) -> AsyncIterator[Helper]:
    live.services = services
    process = await helper(*agent_args(live), env=agent_env(live))
    await process.line("waiting on")
    yield process
    assert await process.stop() == 0


async def open_tunnel(live: Live, **body: Any) -> dict[str, Any]:
    world = live.world
    body = {"services": ["ECHO", "HTTP", "CLOSED"], **body}
    path = f"/v2/devices/{world.id('device_member')}/tunnels"
    status, reply = await world.call("org_admin", "POST", path, json=body)
    assert status == 201, reply
    return dict(reply["tunnel"])


async def start_connect(live: Live, tunnel: dict[str, Any], service: str) -> Helper:
    return await helper(
        "connect",
        "--server",
        live.base,
        "--tunnel",
        tunnel["uuid"],
        "--service",
        service,
        "--listen",
        "127.0.0.1:0",
        "--check-every",
        "0.2",
        env={"EDGE_TUNNEL_TOKEN": tunnel["client_access_token"]},
    )


async def connect(live: Live, tunnel: dict[str, Any], service: str) -> tuple[Helper, int]:
    process = await start_connect(live, tunnel, service)
    found = await process.line(r"on 127\.0\.0\.1:(\d+)")
    return process, int(found.group(1))


async def refused_at_start(process: Helper) -> tuple[int, str]:
    """The exit code and standard error of a helper that refused to start."""
    assert process.process.stdout is not None and process.process.stderr is not None
    async with asyncio.timeout(LINE_SECONDS):
        out, err = await process.process.stdout.read(), await process.process.stderr.read()
        code = await process.process.wait()
    assert out == b""  # it never listened
    return code, err.decode()


async def ended(process: Helper, port: int) -> None:
    """The helper said the tunnel closed, exited with 0 and listens no more."""
    await process.line("closed or expired")
    async with asyncio.timeout(LINE_SECONDS):
        assert await process.process.wait() == 0
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", port)


async def echo_through(port: int, size: int) -> None:
    payload = os.urandom(size)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(payload)
    await writer.drain()
    writer.write_eof()  # half-close: the echo service answers everything, then closes
    received = await reader.read()
    writer.close()
    assert received == payload


async def test_echo_and_http_through_the_helpers(live: Live, agent: Helper, site: Site) -> None:
    tunnel = await open_tunnel(live)
    echo_helper, echo_port = await connect(live, tunnel, "ECHO")
    http_helper, http_port = await connect(live, tunnel, "http")
    try:
        await asyncio.gather(*(echo_through(echo_port, size) for size in (1, 70_000, 3_000_000)))
        body = os.urandom(5_000_000)
        async with aiohttp.ClientSession() as session:

            async def get(who: str) -> None:
                async with session.get(f"http://127.0.0.1:{http_port}/hello?who={who}") as r:
                    assert (r.status, await r.text()) == (200, f"hello {who}")

            async def post() -> None:
                async with session.post(
                    f"http://127.0.0.1:{http_port}/digest", data=io.BytesIO(body)
                ) as r:
                    assert await r.text() == hashlib.sha256(body).hexdigest()

            await asyncio.gather(get("a"), get("b"), post(), get("c"))
        # Each connection, once both sides closed, is a stream no more (none lingers).
        hub = site.services.tunnels.hub
        while hub.live.get(tunnel["uuid"]) and hub.live[tunnel["uuid"]].streams:
            await asyncio.sleep(0.05)
    finally:
        assert await echo_helper.stop() == 0
        assert await http_helper.stop() == 0


async def test_a_service_the_device_cannot_open_drops_that_connection(
    live: Live, agent: Helper
) -> None:
    tunnel = await open_tunnel(live)
    process, port = await connect(live, tunnel, "CLOSED")
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    assert await reader.read() == b""  # closed: the device could not open it
    writer.close()
    assert await process.stop() == 0


async def held_stream(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """An open echo connection that has carried bytes (so it is relayed end to end)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"ping")
    await writer.drain()
    assert await reader.readexactly(4) == b"ping"
    return reader, writer


async def test_closing_the_tunnel_drops_its_streams(live: Live, agent: Helper) -> None:
    tunnel = await open_tunnel(live)
    process, port = await connect(live, tunnel, "ECHO")
    held = [await held_stream(port) for _ in range(3)]
    world = live.world
    path = f"/v2/devices/{world.id('device_member')}/tunnels/{tunnel['uuid']}"
    assert (await world.call("org_admin", "DELETE", path))[0] == 200
    for reader, writer in held:
        assert await reader.read() == b""  # dropped
        writer.close()
    await agent.line(f"tunnel {tunnel['uuid']}: closed")
    await ended(process, port)  # it listened on until its first connection failed


async def test_expiry_drops_the_streams(live: Live, agent: Helper) -> None:
    tunnel = await open_tunnel(live, timeout=1)
    process, port = await connect(live, tunnel, "ECHO")
    reader, writer = await held_stream(port)
    clock.advance(timedelta(minutes=1, seconds=1))  # the server's clock: its watch drops it
    assert await reader.read() == b""
    writer.close()
    await agent.line(f"tunnel {tunnel['uuid']}: closed")
    await ended(process, port)


async def test_an_idle_helper_ends_when_the_tunnel_is_closed(live: Live, agent: Helper) -> None:
    """No stream open: it notices by asking the server (every --check-every seconds)."""
    tunnel = await open_tunnel(live)
    process, port = await connect(live, tunnel, "HTTP")
    world = live.world
    path = f"/v2/devices/{world.id('device_member')}/tunnels/{tunnel['uuid']}"
    assert (await world.call("org_admin", "DELETE", path))[0] == 200
    await ended(process, port)


async def test_a_service_the_tunnel_does_not_offer_is_refused_at_start(
    live: Live, agent: Helper
) -> None:
    tunnel = await open_tunnel(live, services=["ECHO", "HTTP"])
    code, err = await refused_at_start(await start_connect(live, tunnel, "CLOSED"))
    assert code == 2
    assert (
        err == "edge tunnel connect: the tunnel was not opened for CLOSED: it offers ECHO, HTTP\n"
    )
    process, _ = await connect(live, tunnel, "echo")  # any case of an offered one is fine
    assert await process.stop() == 0


async def test_a_closed_tunnel_or_a_wrong_token_is_refused_at_start(
    live: Live, agent: Helper
) -> None:
    tunnel = await open_tunnel(live)
    world = live.world
    wrong = {**tunnel, "client_access_token": "etc_" + "x" * 43}
    code, err = await refused_at_start(await start_connect(live, wrong, "ECHO"))
    assert code == 1 and err.count("\n") == 1 and "token is wrong" in err
    path = f"/v2/devices/{world.id('device_member')}/tunnels/{tunnel['uuid']}"
    assert (await world.call("org_admin", "DELETE", path))[0] == 200
    code, err = await refused_at_start(await start_connect(live, tunnel, "ECHO"))
    assert code == 1 and "closed or expired" in err


def folder_bytes(site: Site) -> dict[str, bytes]:
    """The raw bytes of the database and its WAL, as a backup would copy them."""
    folder = site.services.config.data_dir
    return {name: (folder / name).read_bytes() for name in ("edge.db", "edge.db-wal")}


async def test_a_notice_queued_for_an_offline_agent_holds_no_token(
    live: Live, agent: Helper, site: Site
) -> None:
    """The notice waiting for an offline agent is stored with its persistent session (in
    edge.db and its WAL): it carried the live destination token, so a backup held one. It
    names the tunnel only; the agent takes its token when it comes back, and connects."""
    assert await agent.stop() == 0  # offline; its persistent session stays
    tunnel = await open_tunnel(live)
    uuid = tunnel["uuid"].encode()

    def queued() -> bool:
        sql = "SELECT payload FROM mqtt_session_messages"
        rows = site.services.db.read(lambda c: c.execute(sql).fetchall())
        return any(uuid in bytes(payload) for (payload,) in rows)

    for _ in range(750):  # the broker notices the agent went away on its own
        if queued():
            break
        await asyncio.sleep(0.02)
    assert queued(), "the notice was not queued for the offline agent"
    for name, raw in folder_bytes(site).items():
        assert b"etd_" not in raw, name  # no destination token, in any row or WAL page
    back = await helper(*agent_args(live), env=agent_env(live))
    try:
        await back.line(f"tunnel {tunnel['uuid']}: connected")
        process, port = await connect(live, tunnel, "ECHO")
        await echo_through(port, 1000)
        assert await process.stop() == 0
    finally:
        assert await back.stop() == 0
    for name, raw in folder_bytes(site).items():
        assert b"etd_" not in raw, name  # the token it took is kept as its hash only
