"""The middleware chain, in order, each with its reason."""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

from aiohttp import web

from api import errors
from api.errors import ErrorHook, Handler
from api.keys import REQUEST_ID

access_log = logging.getLogger("edge.access")
_CLIENT_REQUEST_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


@web.middleware
async def request_id(request: web.Request, handler: Handler) -> web.StreamResponse:
    """First: every log line and every error body can name the request."""
    given = request.headers.get("X-Request-ID", "")
    rid = given if _CLIENT_REQUEST_ID.match(given) else uuid.uuid4().hex
    request[REQUEST_ID] = rid
    started = time.perf_counter()
    response = await handler(request)
    response.headers["X-Request-ID"] = rid
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    access_log.info(
        "%s %s %s %.1fms",
        request.method,
        request.path,
        response.status,
        (time.perf_counter() - started) * 1000,
        extra={"request_id": rid},
    )
    return response


def chain(on_server_error: ErrorHook | None = None) -> list[Any]:
    return [
        request_id,  # outermost: the ID exists before anything can fail
        errors.middleware(on_server_error),  # every failure below becomes a Status payload
    ]
