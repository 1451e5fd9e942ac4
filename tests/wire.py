"""Raw HTTP on a connection of its own: requests written byte for byte, for what the test
client will not send (dot segments, bytes that are not UTF-8, two requests on one
connection, a body that stops coming), and the bytes the server answers.

`at` is a world's or a fixture's `Api` (the test client's server) or any server with a
host and a port. Each wait has a generous bound that only keeps a broken server from
hanging the suite; no assertion is about time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol

from tests.conftest import Api

BOUND = 30  # seconds: a safety net, never the thing tested


class Listening(Protocol):
    host: str
    port: int | None


def address(at: Api | Listening | None) -> tuple[str, int]:
    server = at.client.server if isinstance(at, Api) else at
    assert server is not None and server.port is not None
    return server.host, server.port


async def connect(at: Api | Listening | None) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection for a test that writes and reads in steps of its own."""
    return await asyncio.open_connection(*address(at))


async def reply(at: Api | Listening | None, request: bytes) -> bytes:
    """Everything the server sends back until it closes the connection (a request that
    wants the whole reply says `Connection: close`, or is one the server closes on)."""
    return await _exchange(at, request, asyncio.StreamReader.read)


async def status_line(at: Api | Listening | None, request: bytes) -> bytes:
    """The status line the request is answered (the connection is then dropped)."""
    return await _exchange(at, request, asyncio.StreamReader.readline)


async def _exchange(
    at: Api | Listening | None,
    request: bytes,
    read: Callable[[asyncio.StreamReader], Awaitable[bytes]],
) -> bytes:
    reader, writer = await connect(at)
    try:
        writer.write(request)
        await writer.drain()
        async with asyncio.timeout(BOUND):
            return await read(reader)
    finally:
        writer.close()


def status_and_body(whole: bytes) -> tuple[int, bytes]:
    """A reply's status code and its body (what follows the blank line after the headers)."""
    first, _, rest = whole.partition(b"\r\n")
    return int(first.split()[1]), rest.partition(b"\r\n\r\n")[2]
