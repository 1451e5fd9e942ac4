"""The helpers' side of a stream: one TCP connection joined to one WebSocket.

Bytes go as binary frames of at most `CHUNK`; when one side stops sending (TCP half-close)
the text frame `eof` says so and the other side shuts its write half, so a request/response
protocol that closes its sending side (`nc -N`, HTTP/1.0) works. Back-pressure both ways:
the TCP side is read only after the previous chunk was sent (aiohttp waits for the socket
to drain), and a frame is written to TCP with `drain` before the next is read.
"""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import ClientWebSocketResponse, WSMsgType

CHUNK = 64 * 1024
MAX_FRAME = 4 * CHUNK
EOF_FRAME = "eof"


async def bridge(
    ws: ClientWebSocketResponse, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Carry bytes both ways until both sides finished sending, or either end closed."""
    outgoing = asyncio.create_task(_tcp_to_ws(reader, ws))
    incoming = asyncio.create_task(_ws_to_tcp(ws, writer))
    try:
        done, _ = await asyncio.wait({outgoing, incoming}, return_when=asyncio.FIRST_COMPLETED)
        if incoming in done and incoming.result():
            await outgoing  # the other side is done sending; ours may not be
        elif outgoing in done and not outgoing.exception():
            await incoming  # we are done sending; the other side may still answer
    finally:
        for task in (outgoing, incoming):
            task.cancel()
        await asyncio.gather(outgoing, incoming, return_exceptions=True)
        await ws.close()
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def _tcp_to_ws(reader: asyncio.StreamReader, ws: ClientWebSocketResponse) -> None:
    while True:
        data = await reader.read(CHUNK)
        if not data:
            await ws.send_str(EOF_FRAME)
            return
        await ws.send_bytes(data)


async def _ws_to_tcp(ws: ClientWebSocketResponse, writer: asyncio.StreamWriter) -> bool:
    """True when the other side finished sending (`eof`), False when the WebSocket ended."""
    async for message in ws:
        if message.type == WSMsgType.BINARY:
            writer.write(message.data)
            await writer.drain()
        elif message.type == WSMsgType.TEXT and message.data == EOF_FRAME:
            if writer.can_write_eof():
                writer.write_eof()
            return True
        else:
            break
    return False
