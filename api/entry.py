"""The ways in: `GET /` and `GET /v2`, the first URLs the startup banner and a curious
person try. Both are edge's own (extensions, tagged so in the OpenAPI document), public:

- GET /    302 to the operator console (`/console/`, api/console.py)
- GET /v2  the interface's entry points (`InterfaceIndex`): its name, versions, and the
           absolute URLs of the document, the reference, health, the signing keys and sign-in
"""

from __future__ import annotations

from aiohttp import web

from api import auth, system
from api.model_fields import STR, Schema, model
from api.responses import NO_STORE, json_response
from api.routing import Route
from api.system import public_base
from edge import BUILD_VERSION, INTERFACE_VERSION

# The entry points by name, each the operation that serves it: the paths are read from
# those operations' routes, so a route that moves takes its link along.
ENTRY_POINTS = {
    "openapi": "get_openapi",
    "docs": "get_docs",
    "changelog": "get_changelog",
    "version": "get_version_number",
    "health": "health_check",
    "ready": "health_ready",
    "jwks": "get_well_known_jwks",
    "token": "login",
    "security_txt": "get_security_info",
}


def _paths(routes: list[Route]) -> dict[str, str]:
    """Each entry point's path (relative to the public URL), from the route table."""
    by_operation = {route.operation_id: route.path for route in routes}
    return {name: by_operation[operation] for name, operation in ENTRY_POINTS.items()}


LINKS = _paths([*system.ROUTES, *auth.ROUTES])
HOME = "/console/"  # where `/` leads: the operator console (api/console.py)
MODELS: dict[str, Schema] = {
    "InterfaceIndex": model(
        "The interface's entry points (edge's own)",
        "name* version* server_version* links*",
        name=STR,
        version=STR,
        server_version=STR,
        links=model(
            "Absolute URLs of the entry points",
            " ".join(f"{name}*" for name in LINKS),
            **dict.fromkeys(LINKS, {"type": "string", "format": "uri"}),
        ),
    ),
}


async def home(request: web.Request) -> web.Response:
    """A temporary redirect, so that nothing caches where `/` leads."""
    return web.Response(status=302, headers={"Location": HOME, **NO_STORE})


async def index(request: web.Request) -> web.Response:
    base = public_base(request)
    return json_response(
        {
            "name": "edge",
            "version": INTERFACE_VERSION,
            "server_version": BUILD_VERSION,
            "links": {name: base + path for name, path in LINKS.items()},
        }
    )


ROUTES = [
    Route(
        "GET",
        "/",
        home,
        "public",
        "Where to start: a redirect to the operator console (/console/)",
        "system",
        responses={302: "To the operator console"},
        response_type="",
        operation_id="get_home",
        extension=True,
    ),
    Route(
        "GET",
        "/v2",
        index,
        "public",
        "The interface's entry points: versions and the URLs of the document, reference,"
        " health, signing keys and sign-in",
        "system",
        responses={200: "InterfaceIndex"},
        operation_id="get_interface_index",
        extension=True,
    ),
]
