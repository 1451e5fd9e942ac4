"""One client connection's two ends, as amqtt's reader and writer adapters plus what the
message path needs: whole chunks to read, and writes gathered per loop iteration.

amqtt writes each packet with its own `write` and `drain`, one system call per message
for every receiver. A link instead gathers what is sent to it while the event loop runs
one round and hands it to the socket in one write, and says how many bytes are still
waiting, which is what the queue bounds are measured against (embedded_broker/sessions.py).
Every write goes through the same gathering buffer, amqtt's own included, so packets
keep their order.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Protocol

from amqtt.adapters import (
    StreamReaderAdapter,
    StreamWriterAdapter,
    WebSocketsReader,
    WebSocketsWriter,
)
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

CHUNK_BYTES = 65536


class ChunkReader(Protocol):
    async def read_chunk(self) -> bytes:
        """What has arrived (at least one byte), or b"" at the end of the stream."""
        ...


class Link(Protocol):
    def send(self, data: bytes) -> None: ...

    def waiting(self) -> int:
        """Bytes sent to this link and not yet taken by the operating system."""
        ...

    def abort(self) -> None:
        """Drop the connection now, without flushing (a slow or revoked client)."""
        ...

    def flush(self) -> None:
        """Hand what is gathered to the socket now, not at the end of the loop's round: a
        server notice someone waits for (embedded_broker/router.py, `route_to_device`)."""
        ...


class _Gather:
    """The gathering buffer both kinds of link share."""

    def __init__(self, flush: Callable[[], None]) -> None:
        self._parts: list[bytes] = []
        self._size = 0
        self._scheduled = False
        self._loop = asyncio.get_running_loop()
        self._flush_at_round_end = flush  # the link's own way to hand a round's bytes on

    def _add(self, data: bytes) -> None:
        self._parts.append(data)
        self._size += len(data)
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._flush_at_round_end)

    def _take(self) -> bytes:
        data = b"".join(self._parts)
        self._parts.clear()
        self._size = 0
        self._scheduled = False
        return data


class TcpReader(StreamReaderAdapter):
    def __init__(self, reader: asyncio.StreamReader) -> None:
        super().__init__(reader)
        self._stream = reader

    async def read_chunk(self) -> bytes:
        try:
            return await self._stream.read(CHUNK_BYTES)
        except (ConnectionError, OSError):
            return b""


class TcpWriter(StreamWriterAdapter, _Gather):
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        StreamWriterAdapter.__init__(self, writer)
        _Gather.__init__(self, self.flush)
        self._transport = writer.transport

    def send(self, data: bytes) -> None:
        if not self.is_closed:
            self._add(data)

    def write(self, data: bytes) -> None:
        self.send(data)

    def waiting(self) -> int:
        return self._size + self._transport.get_write_buffer_size()

    def abort(self) -> None:
        self.is_closed = True
        self._transport.abort()

    async def drain(self) -> None:
        self.flush()
        await super().drain()

    async def close(self) -> None:
        self.flush()
        try:
            await super().close()
        except (ConnectionError, OSError):
            pass  # the peer went first
        finally:
            self._transport.close()

    def flush(self) -> None:
        data = self._take()
        if data and not self.is_closed and not self._transport.is_closing():
            self._transport.write(data)


class WsReader(WebSocketsReader):
    def __init__(self, connection: ServerConnection) -> None:
        super().__init__(connection)
        self._connection = connection

    async def read_chunk(self) -> bytes:
        left = self._stream.read()  # what amqtt's CONNECT reading left over
        if left:
            return bytes(left)
        try:
            message = await self._connection.recv()
        except ConnectionClosed:
            return b""
        return message.encode("utf-8") if isinstance(message, str) else bytes(message)


class WsWriter(WebSocketsWriter, _Gather):
    """MQTT packets may share and straddle WebSocket frames (MQTT 3.1.1, section 6), so a
    round's packets go out as one binary frame."""

    def __init__(self, connection: ServerConnection) -> None:
        WebSocketsWriter.__init__(self, connection)
        _Gather.__init__(self, self.flush)
        self._connection = connection
        self._sending: asyncio.Task[None] | None = None
        self._closed = False

    def send(self, data: bytes) -> None:
        if not self._closed:
            self._add(data)

    def write(self, data: bytes) -> None:
        self.send(data)

    def waiting(self) -> int:
        transport = self._connection.transport
        return self._size + (transport.get_write_buffer_size() if transport else 0)

    def abort(self) -> None:
        self._closed = True
        self._connection.transport.abort()

    async def drain(self) -> None:
        self.flush()
        if self._sending is not None:
            with contextlib.suppress(ConnectionClosed):
                await asyncio.shield(self._sending)

    async def close(self) -> None:
        await self.drain()
        self._closed = True
        await self._connection.close()

    def flush(self) -> None:
        if self._sending is not None and not self._sending.done():
            return  # the frame being sent takes what is gathered when it is done
        if not self._parts:
            self._scheduled = False  # an earlier flush took it all: no task for nothing
            return
        self._sending = asyncio.ensure_future(self._send_all())

    async def _send_all(self) -> None:
        while self._parts and not self._closed:
            data = self._take()
            try:
                await self._connection.send(data)
            except ConnectionClosed:
                self._closed = True
        self._scheduled = False
