"""Sending a file's bytes: its S3 ETag, conditional requests and byte ranges, sendfile.

aiohttp's FileResponse makes its own ETag from mtime and size and answers conditional
requests with it; clients of this interface compare S3 ETags (the one in the file entry),
so this response decides If-Match, If-None-Match, If-Range and the date conditions on that
ETag and the upload date, then hands the bytes to the kernel's sendfile (api/sendfile.py,
which works under uvloop, whose `loop.sendfile` does not), blob by blob for a multipart
file. Over TLS the bytes are read and written in FALLBACK_CHUNK pieces. Either way a client
that takes no bytes for `send_timeout` seconds is cut off.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from datetime import datetime
from typing import BinaryIO

from aiohttp import hdrs, web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.helpers import ETAG_ANY, ETag

from api import sendfile
from api.responses import encode
from edge.files import etags
from edge.files.entries import Download

FALLBACK_CHUNK = 1 << 20
# Files are served from the API's own origin, with the content type their uploader gave: a
# page among them (HTML, SVG, XML) would run its scripts there, next to whatever that
# origin's pages keep. So every download is sandboxed (an opaque origin, no scripts, no
# forms; it still displays), except PDF, which browsers' viewers refuse to show sandboxed.
SANDBOX = "sandbox"
UNSANDBOXED = frozenset({"application/pdf"})
# One range (RFC 9110 14.1.2): `first-last`, `first-` or the suffix `-length`. aiohttp's
# parser reads `bytes=-0` as "from byte 0", the whole file, where it is unsatisfiable.
_ONE_RANGE = re.compile(r"bytes=(?:(\d+)-(\d*)|-(\d+))", re.IGNORECASE | re.ASCII)


def _media_type(content_type: str) -> str:
    return content_type.partition(";")[0].strip().lower()


class BlobResponse(web.StreamResponse):
    def __init__(self, download: Download, stall: float) -> None:
        super().__init__()
        self._download = download
        self._stall = stall  # seconds a client may take no bytes before it is cut off

    async def prepare(self, request: web.BaseRequest) -> AbstractStreamWriter | None:
        try:
            return await self._send(request)
        finally:
            self._download.close()

    async def _send(self, request: web.BaseRequest) -> AbstractStreamWriter | None:
        blob = self._download
        self.etag = blob.etag
        self.last_modified = blob.modified
        self.headers[hdrs.ACCEPT_RANGES] = "bytes"
        if not _preconditions_hold(request, blob.etag, _seconds(blob.modified)):
            return await self._answer(request, 412, "The file does not match the precondition")
        if _not_modified(request, blob.etag, _seconds(blob.modified)):
            self.set_status(304)
            self._length_check = False
            return await super().prepare(request)
        try:
            offset, count = _range(request, blob.etag, _seconds(blob.modified), blob.size)
        except ValueError:
            self.headers[hdrs.CONTENT_RANGE] = f"bytes */{blob.size}"
            return await self._answer(request, 416, "The range is outside the file")
        if count != blob.size:
            self.set_status(206)
            self.headers[hdrs.CONTENT_RANGE] = f"bytes {offset}-{offset + count - 1}/{blob.size}"
        self.headers[hdrs.CONTENT_TYPE] = blob.content_type
        if _media_type(blob.content_type) not in UNSANDBOXED:
            self.headers[hdrs.CONTENT_SECURITY_POLICY] = SANDBOX
        self.content_length = count
        writer = await super().prepare(request)
        if count and writer is not None and request.method != hdrs.METH_HEAD:
            await self._sendfile(request, writer, offset, count)
        await super().write_eof()
        return writer

    async def _sendfile(
        self, request: web.BaseRequest, writer: AbstractStreamWriter, offset: int, count: int
    ) -> None:
        """Blob by blob through the kernel's sendfile on a plain socket; copied in pieces
        over TLS, or where sendfile refuses a file."""
        transport = request.transport
        if transport is None:
            raise ConnectionResetError("Connection lost")
        kernel = sendfile.usable(transport)
        if kernel:
            writer.send_headers()  # else they wait in the writer for the first body bytes
        for handle, start, length in _pieces(self._download.blobs, offset, count):
            if kernel:
                try:
                    await sendfile.send(transport, handle, start, length, self._stall)
                    continue
                except sendfile.Unavailable:
                    kernel = False
            await _copy(writer, handle, start, length, self._stall)

    async def _answer(
        self, request: web.BaseRequest, status: int, message: str
    ) -> AbstractStreamWriter | None:
        body = encode({"message": message})
        self.set_status(status)
        self.content_type = "application/json"
        self.charset = "utf-8"
        self.content_length = len(body)
        writer = await super().prepare(request)
        if request.method != hdrs.METH_HEAD:  # else read as the next response's first bytes
            await self.write(body)
        return writer


def _pieces(
    blobs: list[tuple[BinaryIO, int]], offset: int, count: int
) -> Iterator[tuple[BinaryIO, int, int]]:
    """(blob, offset in it, bytes) for each blob the range `offset`, `count` touches."""
    for handle, size in blobs:
        if count <= 0:
            return
        if offset >= size:
            offset -= size
            continue
        length = min(size - offset, count)
        yield handle, offset, length
        offset, count = 0, count - length


async def _copy(
    writer: AbstractStreamWriter, handle: BinaryIO, offset: int, count: int, stall: float
) -> None:
    await asyncio.to_thread(handle.seek, offset)
    while count > 0:
        chunk = await asyncio.to_thread(handle.read, min(FALLBACK_CHUNK, count))
        if not chunk:
            raise ConnectionResetError("The file is shorter than its entry")
        try:
            async with asyncio.timeout(stall):
                await writer.write(chunk)
        except TimeoutError:
            raise sendfile.Stalled("The client stopped reading") from None
        count -= len(chunk)


def _seconds(moment: datetime) -> datetime:
    return moment.replace(microsecond=0)


def _matches(tags: tuple[ETag, ...], etag: str, *, weak: bool) -> bool:
    if len(tags) == 1 and tags[0].value == ETAG_ANY:
        return True
    return any(t.value == etag for t in tags if weak or not t.is_weak)


def _preconditions_hold(request: web.BaseRequest, etag: str, modified: datetime) -> bool:
    """If-Match (strong), else If-Unmodified-Since (RFC 9110 13.2.2)."""
    if (wanted := request.if_match) is not None:
        return _matches(wanted, etag, weak=False)
    since = request.if_unmodified_since
    return since is None or modified <= since


def _not_modified(request: web.BaseRequest, etag: str, modified: datetime) -> bool:
    """If-None-Match (weak), else If-Modified-Since."""
    if (known := request.if_none_match) is not None:
        return _matches(known, etag, weak=True)
    since = request.if_modified_since
    return since is not None and modified <= since


def _range(request: web.BaseRequest, etag: str, modified: datetime, size: int) -> tuple[int, int]:
    """(offset, count) to send; the whole file unless one satisfiable range applies.
    ValueError for a range that cannot be satisfied (416)."""
    header = request.headers.get(hdrs.RANGE)
    if not header or "," in header or not _range_applies(request, etag, modified):
        return 0, size  # several ranges: allowed to answer with the whole file
    found = _ONE_RANGE.fullmatch(header.strip())
    if found is None:
        raise ValueError("malformed range")
    first, last, suffix = found.groups()
    if suffix is not None:  # the last N bytes; N = 0 is satisfiable by no file (14.1.3)
        count = int(suffix)
        if count == 0:
            raise ValueError("unsatisfiable range")
        return max(0, size - count), min(count, size)
    start = int(first)
    end = size if not last else min(int(last) + 1, size)
    if start >= size or end <= start:
        raise ValueError("unsatisfiable range")
    return start, end - start


def _range_applies(request: web.BaseRequest, etag: str, modified: datetime) -> bool:
    """If-Range: the range counts only while the file is the one the client holds."""
    given = request.headers.get(hdrs.IF_RANGE)
    if given is None:
        return True
    if given.strip().startswith(('"', "W/")):
        return not given.strip().startswith("W/") and etags.unquoted(given) == etag
    since = request.if_range
    return since is not None and modified <= since
