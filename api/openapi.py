"""The OpenAPI 3.1 document, generated from the same route declarations the router uses."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from api.listing import COMMON
from api.routing import Route
from edge import BUILD_VERSION, INTERFACE_VERSION

# A path parameter, with the pattern aiohttp may carry after a colon (`{path:.*}`).
_PATH_PARAM = re.compile(r"{(\w+)(?::[^{}]*)?}")
_ERRORS = {
    "400": "Validation error",
    "401": "Not authenticated",
    "403": "Not permitted",
    "404": "Not found",
    "406": "Body does not match its schema",
    "409": "Conflict",
}
STATUS_REF = {"$ref": "#/components/schemas/Status"}


def build(routes: Sequence[Route], server_url: str) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(canonical(route.path), {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "edge: identity, data, files and device management",
            "version": INTERFACE_VERSION,
            "description": f"Interface {INTERFACE_VERSION}, served by edge {BUILD_VERSION}. "
            "See the [changelog](/v2/changelog).",
        },
        "servers": [{"url": server_url}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Status": {
                    "type": "object",
                    "required": ["message"],
                    "properties": {"message": {"type": "string"}},
                },
            },
        },
    }


def canonical(path: str) -> str:
    """A route's path as documented: `{path:.*}` (a parameter that spans slashes) is `{path}`."""
    return _PATH_PARAM.sub(lambda m: "{" + m.group(1) + "}", path)


def _operation(route: Route) -> dict[str, Any]:
    slug = re.sub(r"[^a-z0-9]+", "_", canonical(route.path).lower()).strip("_")
    operation: dict[str, Any] = {
        "operationId": f"{route.method.lower()}_{slug}",
        "summary": route.summary,
        "tags": [route.tag],
        "parameters": _parameters(route),
        "responses": _responses(route),
    }
    if route.auth != "public":
        operation["security"] = [{"bearer": []}]
    if route.body is not None:
        media = {
            "json": "application/json",
            "form": "application/x-www-form-urlencoded",
            "multipart": "multipart/form-data",
        }[route.body_type]
        operation["requestBody"] = {"required": True, "content": {media: {"schema": route.body}}}
    return operation


def _parameters(route: Route) -> list[dict[str, Any]]:
    found = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in _PATH_PARAM.findall(route.path)
    ]
    names: list[str] = []
    for name in route.query:
        names.extend(COMMON if name == "list" else (name,))
    found.extend(
        {"name": n, "in": "query", "schema": {"type": "string"}} for n in dict.fromkeys(names)
    )
    return found


def _responses(route: Route) -> dict[str, Any]:
    out: dict[str, Any] = {
        str(code): {"description": name, "content": {route.response_type: {"schema": {}}}}
        for code, name in route.responses.items()
    }
    for code, text in _ERRORS.items():
        out.setdefault(
            code, {"description": text, "content": {"application/json": {"schema": STATUS_REF}}}
        )
    return out
