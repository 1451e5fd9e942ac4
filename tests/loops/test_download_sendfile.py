"""Downloads through the kernel's sendfile, under asyncio and under uvloop (every test
here runs on both: uvloop, edge serve's default loop, has no `loop.sendfile`); the copy
where sendfile cannot serve (TLS, a file system without it); a client that stops
reading, or goes, mid-download."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api import sendfile
from edge.certificates import ca
from tests.files import PART, relative
from tests.waiting import eventually
from tests.world import World

STALL = 0.3  # send_timeout of the server whose client stops reading, seconds
BIG = os.urandom(16 << 20)  # more than loopback's socket buffers hold


pytestmark = pytest.mark.world("content", files_min_part_bytes=PART)


@pytest.fixture
def kernel_sends(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The byte count of every os.sendfile call that sent something."""
    sent: list[int] = []
    real = os.sendfile

    def spy(out: int, source: int, offset: int | None, count: int) -> int:
        done = real(out, source, offset, count)
        sent.append(done)
        return done

    monkeypatch.setattr(os, "sendfile", spy)
    return sent


@pytest.fixture
def no_kernel_sendfile(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """os.sendfile refuses, as on a file system without it; yields the refusals' count."""
    refused: list[int] = []

    def refuse(out: int, source: int, offset: int | None, count: int) -> int:
        refused.append(count)
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    monkeypatch.setattr(os, "sendfile", refuse)
    yield refused


async def url_of(world: World, path: str, data: bytes) -> str:
    assert (await world.upload("file_editor", path, data))[0] == 200
    status, body = await world.files("file_reader", "GET", path, params={"url_only": "1"})
    assert status == 200
    return str(body["url"])


async def test_a_download_goes_through_the_kernels_sendfile(
    world: World, kernel_sends: list[int]
) -> None:
    data = os.urandom(3 << 20)
    url = await url_of(world, "k.bin", data)
    status, got, headers = await world.fetch(url)
    assert (status, got) == (200, data)
    assert headers["Content-Length"] == str(len(data))
    assert sum(kernel_sends) == len(data)


async def test_a_range_of_a_multipart_file_is_sent_blob_by_blob(
    world: World, kernel_sends: list[int]
) -> None:
    parts = [os.urandom(PART), os.urandom(PART), b"tail"]
    status, started = await world.files("file_editor", "PUT", "mp.bin", json={"num_parts": 3})
    assert status == 200
    etags = {}
    for number, data in enumerate(parts, 1):
        etags[str(number)] = (await world.send(started["urls"][number - 1], data))[1]
    done = {"completed_upload_id": started["upload_id"], "etag_by_part": etags}
    assert (await world.files("file_editor", "PUT", "mp.bin", json=done))[0] == 200
    url = (await world.files("file_reader", "GET", "mp.bin", params={"url_only": "1"}))[1]["url"]
    whole = b"".join(parts)
    status, got, _ = await world.fetch(url, Range=f"bytes={PART - 3}-{2 * PART + 1}")
    assert (status, got) == (206, whole[PART - 3 : 2 * PART + 2])
    assert sum(kernel_sends) == len(got) and len(kernel_sends) >= 3  # one blob at a time


async def test_head_sends_no_bytes(world: World, kernel_sends: list[int]) -> None:
    url = await url_of(world, "h.bin", b"x" * 5000)
    assert world.api is not None
    response = await world.api.client.head(relative(url))
    assert (response.status, await response.read()) == (200, b"")
    assert kernel_sends == []


async def test_where_sendfile_refuses_the_bytes_are_copied(
    world: World, no_kernel_sendfile: list[int]
) -> None:
    data = os.urandom((2 << 20) + 17)  # more than one copied piece
    url = await url_of(world, "c.bin", data)
    status, got, _ = await world.fetch(url)
    assert (status, got) == (200, data)
    assert no_kernel_sendfile, "sendfile should have been tried first"
    status, got, _ = await world.fetch(url, Range="bytes=10-19")
    assert (status, got) == (206, data[10:20])


# -- clients that stop reading or go --------------------------------------------------------
async def raw_get(world: World, url: str) -> socket.socket:
    """A connection that asks for `url` and reads nothing, with a small receive buffer."""
    assert world.api is not None
    server = world.api.client.server
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (server.host, server.port))
    request = f"GET {relative(url)} HTTP/1.1\r\nHost: test\r\n\r\n"
    await loop.sock_sendall(sock, request.encode())
    return sock


async def read_to_end(sock: socket.socket, within: float) -> int:
    """Bytes read until the server closes (or resets) the connection."""
    loop = asyncio.get_running_loop()
    total = 0
    async with asyncio.timeout(within):
        while True:
            try:
                chunk = await loop.sock_recv(sock, 1 << 20)
            except ConnectionResetError:
                return total
            if not chunk:
                return total
            total += len(chunk)


@pytest.fixture
def stalls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each time the server cut off a client that stopped reading (either way of sending
    raises sendfile.Stalled, looked up when raised)."""
    seen: list[str] = []

    class Seen(sendfile.Stalled):
        def __init__(self, message: str) -> None:
            seen.append(message)
            super().__init__(message)

    monkeypatch.setattr(sendfile, "Stalled", Seen)
    return seen


@pytest.mark.world(send_timeout=STALL)
@pytest.mark.parametrize("sending", ["kernel", "copy"])
async def test_a_client_that_stops_reading_is_cut_off(
    world: World, sending: str, request: pytest.FixtureRequest, stalls: list[str]
) -> None:
    """The client takes nothing until the server has given up on it (however long the
    server took to start sending), then reads what is left: the buffers' bytes, then the
    end. A server that never cuts it off fails the wait."""
    if sending == "copy":
        request.getfixturevalue("no_kernel_sendfile")
    url = await url_of(world, "big.bin", BIG)
    sock = await raw_get(world, url)
    try:
        await eventually(lambda: stalls, "the server cut off the client")
        received = await read_to_end(sock, within=10)
    finally:
        sock.close()
    assert 0 < received < len(BIG)  # the headers and what the buffers held, then the end
    status, got, _ = await world.fetch(url, Range="bytes=0-9")  # the server goes on
    assert (status, got) == (206, BIG[:10])


async def test_a_client_that_goes_mid_download_leaves_no_error(
    world: World, kernel_sends: list[int], caplog: pytest.LogCaptureFixture
) -> None:
    url = await url_of(world, "gone.bin", BIG)
    loop = asyncio.get_running_loop()
    with caplog.at_level(logging.WARNING):
        sock = await raw_get(world, url)
        await loop.sock_recv(sock, 65536)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")  # RST
        sock.close()
        status, got, _ = await world.fetch(url, Range="bytes=-5")
        assert (status, got) == (206, BIG[-5:])
    assert sum(kernel_sends) < len(BIG) + 5  # the first download was cut short
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


# -- which transports sendfile serves ---------------------------------------------------------
async def connected_transport(context: ssl.SSLContext | None, trust: Path | None) -> Any:
    """The server side of one loopback connection, plain or TLS, and a closer."""
    loop = asyncio.get_running_loop()
    accepted: asyncio.Future[asyncio.BaseTransport] = loop.create_future()

    class Keep(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            accepted.set_result(transport)

    server = await loop.create_server(Keep, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    client_context = ssl.create_default_context(cafile=str(trust)) if trust else None
    writer = (
        await asyncio.open_connection(
            "127.0.0.1", port, ssl=client_context, server_hostname="localhost" if trust else None
        )
    )[1]
    transport = await asyncio.wait_for(accepted, 5)

    async def close() -> None:
        writer.close()
        transport.close()
        server.close()
        await server.wait_closed()

    return transport, close


@pytest.mark.parametrize("tls", [False, True])
async def test_sendfile_serves_plain_sockets_and_not_tls(tmp_path: Path, tls: bool) -> None:
    context = trust = None
    if tls:
        issued = ca.server_certificate(tmp_path / "ca", ["localhost"])
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(issued.cert, issued.key)
        trust = issued.ca
    transport, close = await connected_transport(context, trust)
    try:
        assert sendfile.usable(transport) is not tls
    finally:
        await close()
