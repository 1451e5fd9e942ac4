"""Reading one file from a multipart/form-data body, with a size cap while streaming.

The cap is applied as the bytes arrive, so an oversized upload is refused without being
held in memory whole; the whole read is held to `body_timeout` (408), as every other body
is, so a client that stalls mid-body does not hold a handler for ever.
"""

from __future__ import annotations

from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

from api import bodies
from edge.kernel.errors import SchemaError, ValidationError

CHUNK = 64 * 1024


async def read_file(request: web.Request, field: str, limit: int) -> bytes:
    """The bytes of the multipart field `field`; a ValidationError past `limit` bytes,
    TimedOut past the body timeout."""
    if request.content_type != "multipart/form-data":
        raise ValidationError(None, "Content-Type must be multipart/form-data")
    return await bodies.within_body_timeout(request, _read_file(request, field, limit))


async def _read_file(request: web.Request, field: str, limit: int) -> bytes:
    try:
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if isinstance(part, BodyPartReader) and part.name == field:
                return await _read_capped(part, field, limit)
            await part.release()
    except (ValueError, AssertionError, HttpProcessingError, RequestPayloadError):
        raise ValidationError("body", "is not valid multipart/form-data") from None
    raise SchemaError(f"{field}: is required")


async def _read_capped(part: BodyPartReader, field: str, limit: int) -> bytes:
    data = bytearray()
    while chunk := await part.read_chunk(CHUNK):
        data.extend(chunk)
        if len(data) > limit:
            raise ValidationError(field, f"must be at most {limit // (1024 * 1024)} MB")
    return bytes(data)
