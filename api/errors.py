"""The one map from errors to status codes and the Status payload `{"message": ...}`.

Domain errors carry their public message. Anything else is logged with its traceback
and the request ID, and the caller gets a generic 500 that carries only that ID.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from api import routing
from api.keys import CHALLENGE, REQUEST_ID
from api.responses import json_response
from edge.kernel import errors
from edge.kernel.printable import for_log

log = logging.getLogger("edge.http")

STATUS: dict[type[errors.EdgeError], int] = {
    errors.ValidationError: 400,
    errors.Unauthenticated: 401,
    errors.Denied: 403,
    errors.NotFound: 404,
    errors.SchemaError: 406,
    errors.Conflict: 409,
    errors.TooLarge: 413,
    errors.TooManyAttempts: 429,
    errors.Unavailable: 503,
    errors.TimedOut: 408,
    errors.NoReply: 504,
    errors.BadReply: 502,
}
HTTP_MESSAGES = {
    400: "Bad request",
    404: "Not found",
    405: "Method not allowed",
    413: "Request body is too large",
}
FULL_MESSAGE = (
    "Insufficient storage: the server's disk is full; nothing was written, try again later"
)
UNWRITABLE_MESSAGE = (
    "Service unavailable: the server cannot write to its data folder; nothing was written,"
    " try again later"
)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ErrorHook = Callable[[web.Request, int, str], None]


def status_of(exc: errors.EdgeError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 400


def payload(
    status: int,
    message: str,
    headers: dict[str, str] | None = None,
    extension: errors.Extension | None = None,
) -> web.Response:
    """The Status payload: the message, and the refusal's extension fields beside it."""
    body = {"message": message, **(extension or {})}
    response = json_response(body, status=status, headers=headers)
    if status == 401:
        response.headers.setdefault("WWW-Authenticate", 'Bearer realm="edge"')
        if not response.headers["WWW-Authenticate"]:  # the route takes no HTTP scheme
            del response.headers["WWW-Authenticate"]
    return response


def http_error(request: web.Request, exc: web.HTTPException) -> web.Response:
    status = exc.status
    if status == 404:
        message = f"Not found: {request.method} {request.path}"
    elif status == 405:
        message = f"Method {request.method} is not allowed on {request.path}"
    elif status == 413:
        message = f"Request body is larger than {request.app._client_max_size} bytes"
    else:
        message = HTTP_MESSAGES.get(status, exc.reason)
    headers = {k: v for k, v in exc.headers.items() if k in ("Allow", "Location")}
    if status == 405:
        headers["Allow"] = routing.allowed_methods(request)
    return payload(status, message, headers)


def middleware(
    on_server_error: ErrorHook | None = None,
) -> Callable[..., Awaitable[web.StreamResponse]]:
    @web.middleware
    async def errors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except errors.EdgeError as exc:
            status = status_of(exc)
            if exc.cause:
                rid = request.get(REQUEST_ID)
                log.info("request %s: %s (%s)", rid, for_log(exc.message), for_log(exc.cause))
            if status >= 500 and on_server_error:
                on_server_error(request, status, exc.message)
            headers = {}
            if isinstance(exc, errors.TooManyAttempts):
                headers["Retry-After"] = str(exc.retry_after)
            if status == 401 and CHALLENGE in request:  # the route's own scheme, not Bearer
                headers["WWW-Authenticate"] = request[CHALLENGE]
            return payload(status, exc.message, headers, exc.extension)
        except errors.DiskFull:  # any write, files or database: nothing half-written, retry later
            log.warning("request %s: the disk is full", request.get(REQUEST_ID))
            if on_server_error:
                on_server_error(request, 507, "insufficient storage")
            return payload(507, FULL_MESSAGE)
        except errors.NotWritable:  # read-only or failing disk: the same, answered as a 503
            log.warning("request %s: the data folder refuses writes", request.get(REQUEST_ID))
            if on_server_error:
                on_server_error(request, 503, "data folder not writable")
            return payload(503, UNWRITABLE_MESSAGE)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return http_error(request, exc)
        except asyncio.CancelledError:
            raise
        except Exception:
            request_id = request.get(REQUEST_ID, "-")
            path = for_log(request.path)
            log.exception("request %s failed: %s %s", request_id, request.method, path)
            if on_server_error:
                on_server_error(request, 500, "internal server error")
            return payload(500, f"Internal server error (request ID {request_id})")

    return errors_middleware
