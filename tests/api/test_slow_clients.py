"""Slow and greedy clients against the real server on a loopback port: connections that
never finish their request headers are closed after `header_timeout` while normal
clients keep being served; a body that does not arrive is a 408; one address may hold at
most `max_connections_per_address` connections.

No assertion is about time: each wait has a generous bound that only keeps a broken
server from hanging the suite."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from edge.app import Sockets, start
from tests import wire
from tests.conftest import make_config
from tests.factory import new_site
from tests.waiting import eventually_async

BOUND = 30  # seconds: a safety net, never the thing tested
PARTIAL = b"GET /v2/health HTTP/1.1\r\nHost: x\r\nX-Slow: "


@dataclass
class Served:
    host: str
    port: int
    opened: list[asyncio.StreamWriter] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def open(self, send: bytes = b"") -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        self.opened.append(writer)  # closed at the end even when the test fails
        if send:
            writer.write(send)
            await writer.drain()
        return reader, writer


async def serve(data_dir: Path, **settings: Any) -> AsyncIterator[Served]:
    site = new_site(data_dir, **settings)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    runner = await start(site, Sockets(sock, {}))
    served = Served("127.0.0.1", sock.getsockname()[1])
    try:
        yield served
    finally:
        for writer in served.opened:
            writer.close()
        await runner.cleanup()


@pytest.fixture
async def server(data_dir: Path) -> AsyncIterator[Served]:
    async for served in serve(
        data_dir, header_timeout=0.5, body_timeout=0.5, max_connections_per_address=100
    ):
        yield served


async def health(session: aiohttp.ClientSession, served: Served) -> int:
    async with session.get(f"{served.base}/v2/health") as response:
        await response.read()
        return response.status


async def test_idle_half_requests_are_closed_while_others_are_served(server: Served) -> None:
    silent = [await server.open() for _ in range(10)]
    partial = [await server.open(PARTIAL) for _ in range(10)]
    async with aiohttp.ClientSession() as session:
        for _ in range(20):  # served while the 20 idle connections are held
            assert await health(session, server) == 200
        for reader, writer in partial:
            reply = await asyncio.wait_for(reader.read(), BOUND)
            assert reply.startswith(b"HTTP/1.1 408 ") and b'"message"' in reply
            writer.close()
        for reader, writer in silent:
            assert await asyncio.wait_for(reader.read(), BOUND) == b""  # closed, no reply
            writer.close()
        assert await health(session, server) == 200


async def test_a_kept_alive_connection_must_finish_its_next_request(server: Served) -> None:
    reader, writer = await server.open(b"GET /v2/version HTTP/1.1\r\nHost: x\r\n\r\n")
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND)
    assert head.startswith(b"HTTP/1.1 200 ")
    length = re.search(rb"Content-Length: (\d+)", head)
    assert length is not None
    await asyncio.wait_for(reader.readexactly(int(length[1])), BOUND)
    writer.write(PARTIAL)
    await writer.drain()
    assert (await asyncio.wait_for(reader.read(), BOUND)).startswith(b"HTTP/1.1 408 ")
    writer.close()


async def test_a_body_that_does_not_arrive_is_408(server: Served) -> None:
    head = (
        b"POST /v2/auth/token HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n"
        b"grant_type=pass"
    )
    reader, writer = await server.open(head)
    reply = await asyncio.wait_for(reader.readuntil(b"}"), BOUND)  # the unread rest of the
    assert reply.startswith(b"HTTP/1.1 408 "), reply  # body is drained by aiohttp (10 s)
    assert b"did not arrive" in reply
    writer.close()


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /v2/health HTTP/1.1\r\nHost: x\r\nBad Header\xff: y\r\n\r\n",
        b"POST /v2/auth/token HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
        b"Transfer-Encoding: chunked\r\n\r\nabc",
        b"GET /v2/" + b"a" * 20_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    ],
    ids=["a broken header line", "length beside chunked", "a request line over 16 KiB"],
)
async def test_a_request_aiohttp_cannot_read_gets_the_status_payload_and_no_traceback(
    server: Served, request_bytes: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    reply = await wire.reply(server, request_bytes)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert re.match(rb"HTTP/1\.[01] 400 ", head), reply
    assert b"application/json" in head and b"\r\nServer: edge\r\n" in head
    assert b"aiohttp" not in head.lower()
    assert json.loads(body)["message"].startswith("The request could not be read: ")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_one_address_may_hold_only_so_many_connections(data_dir: Path) -> None:
    async for served in serve(data_dir, header_timeout=60, max_connections_per_address=3):
        held = [await served.open() for _ in range(3)]
        reader, writer = await served.open()
        reply = await asyncio.wait_for(reader.read(), BOUND)
        assert reply.startswith(b"HTTP/1.1 503 ") and b"Too many connections" in reply
        writer.close()
        _, first = held.pop()
        first.close()
        await first.wait_closed()
        async with aiohttp.ClientSession() as session:

            async def served_again(served: Served = served) -> bool:  # the close seen
                try:
                    return await health(session, served) == 200
                except aiohttp.ClientError:
                    return False

            await eventually_async(served_again, "a freed slot was reused")
        for _, other in held:
            other.close()


def test_the_defaults_are_sane() -> None:
    config = make_config(Path("unused"))
    assert config.header_timeout == 10 and config.body_timeout == 60
    assert config.keepalive_timeout == 75 and config.max_connections_per_address == 512
