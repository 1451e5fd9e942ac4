"""The operator console (docs/console.md): static files inside the package, served here.

- GET /console            301 to /console/
- GET /console/           the page (index.html), with the idle sign-out from the settings
- GET /console/{asset}    its scripts, styles and vendored code (api/static/console/)

All public: the files hold no data; every call the console makes goes to /v2 with the
signed-in person's own token, like any client. Every answer under /console (and `/`,
which leads here), a 404 or a redirect too, carries a strict Content-Security-Policy:
scripts only from this origin (no inline script, no eval), no framing (`frame`).

The names served are the folder's files, listed once at import: a request is a lookup in
that set, never a filesystem call, so no name a client makes up is remembered or can make
the filesystem fail (a name too long for it is a 404 like any other).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
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
_HEADERS = {"Cache-Control": "no-cache"}
_IDLE = "{{idle_minutes}}"


async def to_console(request: web.Request) -> web.Response:
    return web.Response(status=301, headers={"Location": "/console/"})


async def page(request: web.Request) -> web.Response:
    idle = str(request.app[SERVICES].config.console_idle_minutes)
    text = _read("index.html").decode().replace(_IDLE, idle)
    return web.Response(text=text, content_type="text/html", headers={**_HEADERS, **NO_STORE})


async def asset(request: web.Request) -> web.Response:
    name = request.match_info["asset"]
    content_type = FILES.get(name)
    if content_type is None:
        raise NotFound(f"Not found: {request.path}")
    return web.Response(body=_read(name), content_type=content_type, headers=_HEADERS)


async def frame(request: web.Request, response: web.StreamResponse) -> None:
    """A response-prepare hook: the console's policy on every answer of its paths,
    whoever made it (the handlers, the error mapping's 404s, the redirects), so that no
    console answer is left without it (docs/console.md, Security)."""
    if _console_path(request.path):
        response.headers.setdefault("Content-Security-Policy", CSP)


def _console_path(path: str) -> bool:
    return path in ("/", "/console") or path.startswith("/console/")


def _suffix(name: str) -> str:
    return name[name.rfind(".") :] if "." in name else ""


def _walk(folder: Traversable, prefix: str = "") -> Iterator[str]:
    """Every file under the folder by its plain relative name, hidden ones left out."""
    for entry in folder.iterdir():
        if entry.name.startswith("."):
            continue
        name = prefix + entry.name
        if entry.is_dir():
            yield from _walk(entry, name + "/")
        elif entry.is_file():
            yield name


def _served(folder: Traversable) -> dict[str, str]:
    """Each servable file's name and type: those of a known type (index.html is not one:
    the page is served at /console/ only, with its settings)."""
    found = ((name, TYPES.get(_suffix(name))) for name in _walk(folder))
    return {name: kind for name, kind in found if kind is not None}


FILES = _served(FOLDER)  # fixed for the life of the process, as the package is


@functools.cache
def _read(name: str) -> bytes:
    """Each file read once: only names of FILES (and index.html) come here, a small set."""
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
