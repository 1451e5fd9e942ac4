"""The relay over real WebSockets, in process: both ends connect with their own token (the
device's end is played by the test, as `edge tunnel agent` would), bytes cross intact both
ways on concurrent streams, and wrong, other-end, other-tunnel, closed and expired tokens
are refused before any upgrade. Closing and expiry drop every stream; the stream limit and
the idle timeout hold."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import aiohttp
import pytest
from aiohttp import WSMsgType

from edge.app import Site
from edge.kernel import clock
from tests.waiting import eventually
from tests.world import Notices, World

pytestmark = pytest.mark.world(tunnel_max_streams=3, tunnel_connect_timeout=5)


@pytest.fixture(autouse=True)
def notices(world: World) -> Notices:
    """The notices to devices, kept (the test plays the device's end with their tokens)."""
    return world.keep_notices()


@pytest.fixture
async def http(client: Any) -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    async with aiohttp.ClientSession() as session:
        yield session, str(client.make_url("")).rstrip("/")


class FakeAgent:
    """The device's end: an echo service behind the control channel, as the agent does."""

    def __init__(self, session: aiohttp.ClientSession, base: str, tunnel_id: str, token: str):
        self.session, self.url, self.token = session, f"{base}/v2/tunnels/{tunnel_id}", token
        self.tasks: set[asyncio.Task[None]] = set()
        self.refuse: set[str] = set()

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    async def start(self) -> None:
        self.control = await self.session.ws_connect(f"{self.url}/agent", headers=self.headers())
        self.serving = asyncio.create_task(self._serve())  # ends when the server drops it
        self.tasks.add(self.serving)

    async def _serve(self) -> None:
        async for message in self.control:
            asked = json.loads(message.data)
            if asked["service"] in self.refuse:
                refusal = {"type": "refuse", "stream": asked["stream"], "reason": "ECONNREFUSED"}
                await self.control.send_str(json.dumps(refusal))
                continue
            self.tasks.add(asyncio.create_task(self._echo(asked["stream"])))

    async def _echo(self, stream_id: str) -> None:
        url = f"{self.url}/agent/streams/{stream_id}"
        async with self.session.ws_connect(url, headers=self.headers()) as ws:
            async for message in ws:
                if message.type == WSMsgType.BINARY:
                    await ws.send_bytes(message.data[::-1])  # reversed: a reply, not a loop

    async def stop(self) -> None:
        await self.control.close()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def stream(
    session: aiohttp.ClientSession, base: str, tunnel_id: str, token: str, service: str = "SSH"
) -> aiohttp.ClientWebSocketResponse:
    return await session.ws_connect(
        f"{base}/v2/tunnels/{tunnel_id}/connect",
        params={"service": service},
        headers={"Authorization": f"Bearer {token}"},
    )


async def refused(
    session: aiohttp.ClientSession, url: str, token: str | None, **params: str
) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with session.get(url, params=params, headers=headers) as response:
        return response.status, await response.json()


async def until_closed(ws: aiohttp.ClientWebSocketResponse) -> None:
    async for _ in ws:
        pass
    assert ws.closed


async def test_bytes_cross_intact_on_concurrent_streams(
    world: World, notices: Notices, http: tuple[aiohttp.ClientSession, str]
) -> None:
    session, base = http
    opened = await world.open_tunnel()
    agent = FakeAgent(session, base, opened["uuid"], await world.destination_token(opened["uuid"]))
    await agent.start()
    try:

        async def one(size: int) -> None:
            ws = await stream(session, base, opened["uuid"], opened["client_access_token"])
            for _ in range(4):
                data = os.urandom(size)
                await ws.send_bytes(data)
                reply = await ws.receive()
                assert reply.type == WSMsgType.BINARY and reply.data == data[::-1]
            await ws.close()

        await asyncio.gather(*(one(size) for size in (1, 1000, 60_000)))
    finally:
        await agent.stop()


async def test_wrong_tokens_are_refused(
    world: World, notices: Notices, http: tuple[aiohttp.ClientSession, str]
) -> None:
    session, base = http
    first, second = await world.open_tunnel(), await world.open_tunnel()
    device_token = await world.destination_token(first["uuid"])
    connect = f"{base}/v2/tunnels/{first['uuid']}/connect"
    agent = f"{base}/v2/tunnels/{first['uuid']}/agent"
    for url, token in [
        (connect, None),
        (connect, "etc_" + "A" * 43),  # well-formed, but no tunnel's
        (connect, device_token),  # the other end's
        (connect, second["client_access_token"]),  # another tunnel's
        (agent, first["client_access_token"]),  # the client's token at the device's end
        (agent, await world.destination_token(second["uuid"])),
        (f"{base}/v2/tunnels/{first['uuid']}/agent/streams/s1", first["client_access_token"]),
    ]:
        status, body = await refused(session, url, token, service="SSH")
        assert (status, body) == (401, {"message": "Invalid tunnel token"}), (url, token)
    status, body = await refused(session, connect, first["client_access_token"], service="FTP")
    message = "service: this tunnel offers SSH, HTTP"
    assert (status, body) == (400, {"message": message, "services": ["SSH", "HTTP"]})


async def test_tokens_die_with_their_tunnel(
    world: World, notices: Notices, http: tuple[aiohttp.ClientSession, str]
) -> None:
    session, base = http
    closed, expired = await world.open_tunnel(), await world.open_tunnel(timeout=1)
    tokens = {t["uuid"]: await world.destination_token(t["uuid"]) for t in (closed, expired)}
    path = f"/v2/devices/{world.id('device_member')}/tunnels/{closed['uuid']}"
    assert (await world.call("org_admin", "DELETE", path))[0] == 200
    clock.advance(timedelta(minutes=1, seconds=1))
    for opened in (closed, expired):
        tunnel = opened["uuid"]
        status, _ = await refused(
            session, f"{base}/v2/tunnels/{tunnel}/connect", opened["client_access_token"]
        )
        assert status == 401
        status, _ = await refused(session, f"{base}/v2/tunnels/{tunnel}/agent", tokens[tunnel])
        assert status == 401
        status, _ = await world.call("device_member", "POST", f"/v2/tunnels/{tunnel}/agent/token")
        assert status == 404  # and no new one is given


async def test_closing_drops_both_ends_at_once(
    world: World, notices: Notices, http: tuple[aiohttp.ClientSession, str]
) -> None:
    session, base = http
    opened = await world.open_tunnel()
    agent = FakeAgent(session, base, opened["uuid"], await world.destination_token(opened["uuid"]))
    await agent.start()
    streams = [
        await stream(session, base, opened["uuid"], opened["client_access_token"]) for _ in range(2)
    ]
    path = f"/v2/devices/{world.id('device_member')}/tunnels/{opened['uuid']}"
    assert (await world.call("org_admin", "DELETE", path))[0] == 200
    await asyncio.gather(*(until_closed(ws) for ws in streams), agent.serving)
    await agent.stop()


async def test_expiry_drops_every_stream(
    world: World, notices: Notices, http: tuple[aiohttp.ClientSession, str]
) -> None:
    session, base = http
    opened = await world.open_tunnel(timeout=1)
    agent = FakeAgent(session, base, opened["uuid"], await world.destination_token(opened["uuid"]))
    await agent.start()
    ws = await stream(session, base, opened["uuid"], opened["client_access_token"])
    clock.advance(timedelta(minutes=2))  # the watch reads the clock once a second
    await asyncio.gather(until_closed(ws), agent.serving)
    assert ws.closed and agent.serving.done()  # both ends dropped
    await agent.stop()


async def test_stream_limit_and_refusals(
    world: World, notices: Notices, http: tuple[aiohttp.ClientSession, str], site: Site
) -> None:
    session, base = http
    opened = await world.open_tunnel()
    tunnel, token = opened["uuid"], opened["client_access_token"]
    connect = f"{base}/v2/tunnels/{tunnel}/connect"
    hub = site.services.tunnels.hub
    hub.limits = hub.limits.__class__(max_streams=3, connect_seconds=0.3)
    status, body = await refused(session, connect, token, service="SSH")
    assert (status, body) == (503, {"message": "The device has not connected to this tunnel"})
    # The device's end of each stream below comes within the usual wait: on a loaded
    # machine the fake agent's connection may take longer than 0.3 s.
    hub.limits = hub.limits.__class__(max_streams=3)
    agent = FakeAgent(session, base, tunnel, await world.destination_token(tunnel))
    agent.refuse.add("HTTP")
    await agent.start()
    status, body = await refused(session, connect, token, service="http")
    assert (status, body) == (503, {"message": "The device could not open HTTP: ECONNREFUSED"})
    streams = [await stream(session, base, tunnel, token) for _ in range(3)]
    status, body = await refused(session, connect, token, service="SSH")
    assert (status, body) == (503, {"message": "This tunnel has its maximum of 3 streams"})
    await streams[0].close()
    await eventually(lambda: len(hub.live[tunnel].streams) < 3, "the relay saw a stream go")
    streams[0] = await stream(session, base, tunnel, token)
    for ws in streams:
        await ws.close()
    await agent.stop()


async def test_an_idle_stream_is_closed(
    world: World, notices: Notices, http: tuple[aiohttp.ClientSession, str], site: Site
) -> None:
    session, base = http
    hub = site.services.tunnels.hub
    hub.limits = hub.limits.__class__(idle_seconds=0.5)
    opened = await world.open_tunnel()
    agent = FakeAgent(session, base, opened["uuid"], await world.destination_token(opened["uuid"]))
    await agent.start()
    ws = await stream(session, base, opened["uuid"], opened["client_access_token"])
    await until_closed(ws)
    assert not agent.control.closed  # the tunnel stays; only the stream went
    await agent.stop()


async def test_suspending_or_deleting_the_device_drops_its_tunnels(
    world: World, notices: Notices, http: tuple[aiohttp.ClientSession, str], site: Site
) -> None:
    session, base = http
    member = world.id("device_member")
    opened = await world.open_tunnel()
    agent = FakeAgent(session, base, opened["uuid"], await world.destination_token(opened["uuid"]))
    await agent.start()
    ws = await stream(session, base, opened["uuid"], opened["client_access_token"])
    assert (
        await world.call("org_admin", "PATCH", f"/v2/devices/{member}", json={"is_active": False})
    )[0] == 200
    await asyncio.gather(until_closed(ws), agent.serving)  # the watch saw it
    status, _ = await refused(
        session, f"{base}/v2/tunnels/{opened['uuid']}/connect", opened["client_access_token"]
    )
    assert status == 401
    await agent.stop()
    assert (await world.call("org_admin", "DELETE", f"/v2/devices/{member}?force=true"))[0] == 200
    rows = site.services.db.read(lambda c: c.execute("SELECT count(*) FROM tunnels").fetchone())
    assert rows == (0,)  # they went with the device


async def test_a_websocket_upgrade_is_framed_as_every_answer_is(
    world: World, notices: Notices, http: tuple[aiohttp.ClientSession, str]
) -> None:
    """The 101 is prepared inside the handler, before any layer of the chain sees it: it
    carries the request's ID and the security headers all the same."""
    session, base = http
    opened = await world.open_tunnel()
    upgrade = {
        "Authorization": f"Bearer {await world.destination_token(opened['uuid'])}",
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        "X-Request-ID": "upgrade-1",
    }
    url = f"{base}/v2/tunnels/{opened['uuid']}/agent"
    async with session.get(url, headers=upgrade) as response:
        assert response.status == 101
        assert response.headers["X-Request-ID"] == "upgrade-1"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers.getall("Server") == ["edge"]
