"""The ways in: `GET /` and `GET /v2`, the first URLs the startup banner and a curious
person try. Both are edge's own (extensions, tagged so in the OpenAPI document), public:

- GET /    302 to the interface reference (`/v2/docs`), the one page edge serves today
- GET /v2  the interface's entry points (`InterfaceIndex`): its name, versions, and the
           absolute URLs of the document, the reference, health, the signing keys and sign-in
"""

from __future__ import annotations

from aiohttp import web

from api.model_fields import STR, Schema, model
from api.responses import NO_STORE, json_response
from api.routing import Route
from api.system import public_base
from edge import BUILD_VERSION, INTERFACE_VERSION

HOME = "/v2/docs"  # where `/` leads until a console exists
# The entry points by name: what each is, and where (relative to the public URL).
LINKS = {
    "openapi": "/v2/openapi.json",
    "docs": "/v2/docs",
    "changelog": "/v2/changelog",
    "version": "/v2/version",
    "health": "/v2/health",
    "ready": "/v2/health/ready",
    "jwks": "/.well-known/jwks.json",
    "token": "/v2/auth/token",
    "security_txt": "/.well-known/security.txt",
}
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
    """A temporary redirect: the console will take this place, so nothing may cache it."""
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
        "Where to start: a redirect to the interface reference (/v2/docs)",
        "system",
        responses={302: "To the interface reference"},
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
