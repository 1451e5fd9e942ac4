"""The operator console (docs/console.md): static files inside the package, served here.

- GET /console            301 to /console/
- GET /console/           the page (index.html), with the idle sign-out from the settings
- GET /console/{asset}    its scripts, styles and vendored code (api/static/console/)

All public: the files hold no data; every call the console makes goes to /v2 with the
signed-in person's own token, like any client. Each answer carries a strict
Content-Security-Policy: scripts only from this origin (no inline script, no eval), no
framing.
"""

from __future__ import annotations

import functools
from importlib import resources
from importlib.resources.abc import Traversable

from aiohttp import web

from api.keys import SERVICES
from api.responses import NO_STORE
from api.routing import Route
from edge.kernel.errors import NotFound

FOLDER = resources.files("api") / "static" / "console"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'none'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".txt": "text/plain",
}
_HEADERS = {"Content-Security-Policy": CSP, "Cache-Control": "no-cache"}
_IDLE = "{{idle_minutes}}"


async def to_console(request: web.Request) -> web.Response:
    return web.Response(status=301, headers={"Location": "/console/"})


async def page(request: web.Request) -> web.Response:
    idle = str(request.app[SERVICES].config.console_idle_minutes)
    text = _read("index.html").decode().replace(_IDLE, idle)
    return web.Response(text=text, content_type="text/html", headers={**_HEADERS, **NO_STORE})


async def asset(request: web.Request) -> web.Response:
    name = request.match_info["asset"]
    content_type = TYPES.get(_suffix(name))
    if content_type is None or not _known(name):
        raise NotFound(f"Not found: {request.path}")
    return web.Response(body=_read(name), content_type=content_type, headers=_HEADERS)


def _suffix(name: str) -> str:
    return name[name.rfind(".") :] if "." in name else ""


@functools.cache
def _known(name: str) -> bool:
    """Only a file of the folder, by a plain relative name (no `..`, no hidden files)."""
    parts = name.split("/")
    if any(not part or part.startswith(".") for part in parts):
        return False
    found: Traversable = FOLDER
    for part in parts:
        found = found / part
    return found.is_file()


@functools.cache
def _read(name: str) -> bytes:
    """Each file read once: the set is small and fixed for the life of the process."""
    found: Traversable = FOLDER
    for part in name.split("/"):
        found = found / part
    return found.read_bytes()


ROUTES = [
    Route(
        "GET",
        "/console",
        to_console,
        "public",
        "The operator console (redirects to /console/)",
        "system",
        responses={301: "To /console/"},
        response_type="",
        operation_id="get_console_redirect",
        extension=True,
    ),
    Route(
        "GET",
        "/console/",
        page,
        "public",
        "The operator console (HTML): a client of this interface in the browser",
        "system",
        response_type="text/html",
        operation_id="get_console",
        extension=True,
    ),
    Route(
        "GET",
        "/console/{asset:.+}",
        asset,
        "public",
        "The console's scripts, styles and vendored browser code",
        "system",
        response_type="text/javascript | text/css | image/svg+xml | image/png | text/plain",
        operation_id="get_console_asset",
        extension=True,
        errors=(404,),
    ),
]
