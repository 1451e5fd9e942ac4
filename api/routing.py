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


def principal(request: web.Request) -> Principal:
    found = request.get(PRINCIPAL)
    if not isinstance(found, Principal):
        raise Unauthenticated("Authentication required")
    return found


def _guard(route: Route) -> Handler:
    async def guarded(request: web.Request) -> web.StreamResponse:
        token = bearer(request)
        if token is None:
            raise Unauthenticated("Authentication required: send 'Authorization: Bearer <token>'")
        if route.auth == "challenge" and "." not in token:
            request[CHALLENGE] = request.app[SERVICES].signin.challenges.require(token)
            return await route.handler(request)
        who = request.app[SERVICES].tokens.verify(token)
        if route.auth == "staff" and not who.is_staff:
            raise Denied("Only staff may do this")
        request[PRINCIPAL] = who
        return await route.handler(request)

    return guarded


def register(app: web.Application, routes: Sequence[Route]) -> None:
    for route in routes:
        handler = route.handler if route.auth == "public" else _guard(route)
        app.router.add_route(route.method, route.path, handler)
