"""The kernel's sendfile(2) onto a response's socket, under uvloop as under asyncio.

uvloop, edge's default loop, inherits `loop.sendfile` from the abstract loop, which only
raises, and neither loop lets a caller wait on a transport's own descriptor (`add_writer`
on it is a RuntimeError: the transport owns it). So the socket is duplicated. The
duplicate is what sendfile writes to and what the loop watches for room, and it is ours
to close; writing through it also means that a descriptor number the transport has
closed, and the kernel has given to another connection, is never written to.

The bytes go straight from the page cache to the socket, on the loop's thread, one step of
at most STEP bytes at a time with a yield between steps (as the standard library's own
sendfile does: a page not in the cache is read there). The transport's buffer must be
empty first (the headers out), and nothing else writes to the connection until the send
ends: the response awaits it. A client that takes no bytes for `stall` seconds is cut off.
"""

from __future__ import annotations

import asyncio
import errno
import os
from typing import BinaryIO

STEP = 4 << 20
# What sendfile answers, before any byte has gone, where it cannot be used (a file system
# without it, a socket type it does not take): the caller copies instead.
_UNAVAILABLE = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSOCK})


class Unavailable(Exception):
    """sendfile cannot serve this transport or file; nothing has been sent."""


class Stalled(ConnectionError):
    """The client took no bytes for the allowed time."""


def usable(transport: asyncio.BaseTransport) -> bool:
    """A plain socket the kernel can write a file to (not TLS: the bytes must be encrypted)."""
    if not hasattr(os, "sendfile"):
        return False
    if transport.get_extra_info("sslcontext") or transport.get_extra_info("ssl_object"):
        return False
    sock = transport.get_extra_info("socket")
    return sock is not None and sock.fileno() >= 0


async def send(
    transport: asyncio.WriteTransport, handle: BinaryIO, offset: int, count: int, stall: float
) -> None:
    """`count` bytes of `handle` from `offset` to the client. Unavailable when sendfile
    refused the first step; ConnectionError when the client went or stopped reading."""
    loop = asyncio.get_running_loop()
    await _emptied(loop, transport, stall)
    sock = transport.get_extra_info("socket")
    duplicate = os.dup(sock.fileno())
    try:  # non-blocking like the socket it copies: the flag belongs to the socket, not the number
        await _steps(loop, transport, duplicate, handle.fileno(), offset, count, stall)
    finally:
        os.close(duplicate)


async def _steps(
    loop: asyncio.AbstractEventLoop,
    transport: asyncio.BaseTransport,
    out: int,
    source: int,
    offset: int,
    count: int,
    stall: float,
) -> None:
    sent_any = False
    while count > 0:
        if transport.is_closing():
            raise ConnectionResetError("Connection lost")
        try:
            sent = os.sendfile(out, source, offset, min(count, STEP))
        except BlockingIOError:
            await _room(loop, out, stall)
            continue
        except OSError as exc:
            if not sent_any and exc.errno in _UNAVAILABLE:
                raise Unavailable(exc.strerror) from exc
            raise ConnectionResetError(exc.strerror) from exc
        if sent == 0:  # the file ended early: it was cut under us; the length is now a lie
            raise ConnectionResetError("The file is shorter than its entry")
        sent_any = True
        offset, count = offset + sent, count - sent
        await asyncio.sleep(0)  # let the other connections have the loop between steps


async def _emptied(
    loop: asyncio.AbstractEventLoop, transport: asyncio.WriteTransport, stall: float
) -> None:
    """Until the transport has written all it holds (the headers): the file's bytes must
    follow them, not overtake them. Almost always at once: the loop writes at once when
    there is room."""
    deadline = loop.time() + stall
    while transport.get_write_buffer_size():
        if transport.is_closing():
            raise ConnectionResetError("Connection lost")
        if loop.time() >= deadline:
            raise Stalled("The client stopped reading")
        await asyncio.sleep(0.001)


async def _room(loop: asyncio.AbstractEventLoop, fd: int, stall: float) -> None:
    """Until the socket can take bytes again; Stalled after `stall` seconds."""
    ready: asyncio.Future[None] = loop.create_future()
    loop.add_writer(fd, _wake, ready)
    try:
        async with asyncio.timeout(stall):
            await ready
    except TimeoutError:
        raise Stalled("The client stopped reading") from None
    finally:
        loop.remove_writer(fd)


def _wake(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)
