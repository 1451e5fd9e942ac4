"""Public and service endpoints: health and readiness, version, changelog, reference,
security.txt, JWKS."""

from __future__ import annotations

import functools
import html
import re
from datetime import timedelta
from importlib import resources
from pathlib import Path

import swagger_ui_bundle
from aiohttp import web

from api.keys import SERVICES
from api.responses import NO_STORE, json_response
from api.routing import Route
from edge import BUILD_VERSION, INTERFACE_VERSION
from edge.kernel import clock
from edge.kernel.errors import NotFound
from edge.ops import releases
from edge.ops.health import Health

OPENAPI = web.AppKey("openapi", dict)
HEALTH = web.AppKey("health", Health)
_CODE = re.compile(r"`([^`]+)`")
_STATIC = resources.files("api") / "static"
_OWN_ASSETS = {"docs.js": "text/javascript", "docs.css": "text/css"}
_VENDOR_ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}
_DOCS_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'"
)


async def health(request: web.Request) -> web.Response:
    """HealthInfo from the background probe (edge/ops/health.py): a 200 while serving."""
    return json_response(request.app[HEALTH].report(), headers=NO_STORE)


async def ready(request: web.Request) -> web.Response:
    """200 when every part is ok, else 503 (answered here, not raised: a load balancer
    polling a server that is not ready must not mail the operator every time)."""
    found = request.app[HEALTH]
    if found.ready:
        return json_response(found.report(), headers=NO_STORE)
    return json_response({"message": found.not_ready()}, status=503, headers=NO_STORE)


async def version(request: web.Request) -> web.Response:
    return json_response({"version": INTERFACE_VERSION, "server_version": BUILD_VERSION})


async def changelog(request: web.Request) -> web.Response:
    server = releases.server_releases()
    sections = [_releases("Interface", releases.INTERFACE_HISTORY)]
    if server:
        sections.append(_releases("This server", server))
    else:
        sections.append(
            "<section><h2>This server</h2><p>No release notes in this installation."
            " See CHANGELOG.md in the source.</p></section>"
        )
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<title>edge: changelog</title></head><body>"
        f"<h1>Changelog</h1><p>Interface version {INTERFACE_VERSION}; server {BUILD_VERSION}. "
        'See also the <a href="/v2/docs">interface reference</a>.</p>'
        + "".join(sections)
        + "</body></html>"
    )
    return web.Response(text=page, content_type="text/html")


def _releases(title: str, history: tuple[releases.Release, ...]) -> str:
    items = []
    for release in history:
        dated = f" ({release.date})" if release.date else ""
        anchor = html.escape(release.version, quote=True)
        body = "".join(_section(s) for s in release.sections)
        items.append(f'<h3 id="v{anchor}">{html.escape(release.version)}{dated}</h3>{body}')
    return f"<section><h2>{html.escape(title)}</h2>{''.join(items)}</section>"


def _section(section: releases.Section) -> str:
    heading = f"<h4>{html.escape(section.title)}</h4>" if section.title else ""
    return heading + "<ul>" + "".join(f"<li>{_inline(n)}</li>" for n in section.notes) + "</ul>"


def _inline(note: str) -> str:
    """A note's Markdown code spans as <code>; everything else is text."""
    return _CODE.sub(r"<code>\1</code>", html.escape(note))


async def openapi(request: web.Request) -> web.Response:
    return json_response(request.app[OPENAPI])


async def docs(request: web.Request) -> web.Response:
    page = (_STATIC / "docs.html").read_text("utf-8")
    return web.Response(
        text=page, content_type="text/html", headers={"Content-Security-Policy": _DOCS_CSP}
    )


async def docs_asset(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    content_type = _OWN_ASSETS.get(name) or _VENDOR_ASSETS.get(name)
    if content_type is None:
        raise NotFound(f"Not found: {request.path}")
    return web.Response(
        body=_asset_bytes(name),
        content_type=content_type,
        headers={"Cache-Control": "public, max-age=86400"},
    )


@functools.cache
def _asset_bytes(name: str) -> bytes:
    """Read each known asset once: the vendor bundle (about 1.5 MB) is too big to read from
    disk on the event loop for every request. Only listed names get here, so the cache is small.
    """
    folder = _STATIC if name in _OWN_ASSETS else Path(swagger_ui_bundle.swagger_ui_path)
    return (folder / name).read_bytes()


async def security_txt(request: web.Request) -> web.Response:
    config = request.app[SERVICES].config
    expires = clock.now() + timedelta(days=config.security_expires_days)
    lines = [
        f"Contact: {config.contact}",
        f"Expires: {expires.strftime('%Y-%m-%dT%H:%M:%SZ')}",
        f"Preferred-Languages: {config.security_languages}",
        f"Canonical: {public_base(request)}/.well-known/security.txt",
    ]
    return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")


def public_base(request: web.Request) -> str:
    """The operator's public URL, else the origin this request reached.

    Without `public_url`, `base_url` names the bind address (127.0.0.1 even when serving the
    LAN on 0.0.0.0), which is wrong for every client on another machine.
    """
    config = request.app[SERVICES].config
    if config.public_url:
        return config.base_url
    return str(request.url.origin())


async def jwks(request: web.Request) -> web.Response:
    return json_response(
        request.app[SERVICES].keys.jwks(), headers={"Cache-Control": "public, max-age=300"}
    )


ROUTES = [
    *(
        Route(
            method,
            "/v2/health",
            health,
            "public",
            "Health: status and each part's state (200 while serving)",
            "system",
            responses={200: "HealthInfo"},
            operation_id="health_check" if method == "GET" else "health_check_head",
        )
        for method in ("GET", "HEAD")
    ),
    *(
        Route(
            method,
            "/v2/health/ready",
            ready,
            "public",
            "Readiness: 200 when every part is ok, 503 while not (load balancers)",
            "system",
            responses={200: "HealthInfo", 503: "Status"},
            operation_id="health_ready" if method == "GET" else "health_ready_head",
            extension=True,
        )
        for method in ("GET", "HEAD")
    ),
    Route(
        "GET",
        "/v2/version",
        version,
        "public",
        "Interface version",
        "system",
        responses={200: "VersionInfo"},
        operation_id="get_version_number",
    ),
    Route(
        "GET",
        "/v2/changelog",
        changelog,
        "public",
        "Changelog (HTML)",
        "system",
        response_type="text/html",
        operation_id="get_changelog",
    ),
    Route(
        "GET",
        "/v2/openapi.json",
        openapi,
        "public",
        "This OpenAPI document",
        "system",
        operation_id="get_openapi",
        extension=True,
        responses={200: "OpenApiDocument"},
    ),
    Route(
        "GET",
        "/v2/docs",
        docs,
        "public",
        "Interactive interface reference (HTML)",
        "system",
        response_type="text/html",
        operation_id="get_docs",
    ),
    Route(
        "GET",
        "/v2/docs/assets/{name}",
        docs_asset,
        "public",
        "Reference page assets",
        "system",
        response_type="text/javascript | text/css | image/png",
        operation_id="get_docs_asset",
        extension=True,
        errors=(404,),
    ),
    Route(
        "GET",
        "/.well-known/security.txt",
        security_txt,
        "public",
        "Vulnerability disclosure (RFC 9116)",
        "well_known",
        response_type="text/plain",
        operation_id="get_security_info",
    ),
    Route(
        "GET",
        "/.well-known/jwks.json",
        jwks,
        "public",
        "Token signing keys",
        "well_known",
        responses={200: "Jwks"},
        operation_id="get_well_known_jwks",
        description="The SDK's `well_known.get_jwks`; the same keys as `get_jwks`.",
    ),
    Route(
        "GET",
        "/v2/.well-known/jwks.json",
        jwks,
        "public",
        "Token signing keys",
        "system",
        responses={200: "Jwks"},
        operation_id="get_jwks",
        description="The SDK's `system.get_jwks` (also `well_known.get_jwks`, at the root).",
    ),
]
