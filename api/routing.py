"""Route declarations: method, path, handler, who may call it, and what it documents.

Each `api/<resource>.py` opens with its ROUTES list. The guard here authenticates the
caller for every non-public route, so no handler can forget to; the OpenAPI document is
generated from the same declarations.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

from api.keys import PRINCIPAL, SERVICES
from edge.devices.credentials import is_api_key
from edge.errors import Denied, Unauthenticated
from edge.principal import Principal

Auth = Literal["public", "token", "staff", "challenge"]
# On "challenge" routes (the MFA setup calls) a sign-in challenge session may stand in for
# an access token; the handler finds its row here (and no principal).
CHALLENGE = web.RequestKey("challenge", dict)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    handler: Handler
    auth: Auth
    summary: str
    tag: str
    body: dict[str, Any] | None = None
    body_type: Literal["json", "form", "multipart"] = "json"
    query: Sequence[str] = ()
    responses: dict[int, str] = field(default_factory=lambda: {200: "Success"})
    response_type: str = "application/json"


def bearer(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


def device_key(request: web.Request) -> str | None:
    """A device's API key: the `X-API-Key` header, or a bearer that is an API key (the SDK
    sends keys as bearer tokens). Checked before any token verification: the fast path."""
    key = request.headers.get("X-API-Key", "").strip()
    if key:
        return key
    token = bearer(request)
    return token if token is not None and is_api_key(token) else None


def principal(request: web.Request) -> Principal:
    found = request.get(PRINCIPAL)
    if not isinstance(found, Principal):
        raise Unauthenticated("Authentication required")
    return found


def _guard(route: Route) -> Handler:
    async def guarded(request: web.Request) -> web.StreamResponse:
        key = device_key(request)  # a device's API key: the fast path, no token verified
        token = key or bearer(request)
        if token is None:
            raise Unauthenticated("Authentication required: send 'Authorization: Bearer <token>'")
        if key is None and route.auth == "challenge" and "." not in token:
            request[CHALLENGE] = request.app[SERVICES].signin.challenges.require(token)
            return await route.handler(request)
        services = request.app[SERVICES]
        who = services.device_keys.verify(key) if key else services.tokens.verify(token)
        if route.auth == "staff" and not who.is_staff:
            raise Denied("Only staff may do this")
        request[PRINCIPAL] = who
        return await route.handler(request)

    return guarded


def register(app: web.Application, routes: Sequence[Route]) -> None:
    for route in routes:
        handler = route.handler if route.auth == "public" else _guard(route)
        app.router.add_route(route.method, route.path, handler)
