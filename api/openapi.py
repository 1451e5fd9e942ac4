"""The OpenAPI 3.1 document, generated from the same route declarations the router uses.

One source: request bodies are the schemas the body reader validates against (api/bodies.py),
responses the models of api/models.py the suite checks every response against, query
parameters the types below (or a route's `query_types`). A parameter with no known type is an
error when the document is built, so an undocumented parameter cannot ship.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from api import listing
from api.model_fields import DATE, Schema
from api.models import MODELS
from api.routing import WRITES, Route
from edge import BUILD_VERSION, INTERFACE_VERSION
from edge.files import values as file_values
from edge.kernel import search
from edge.kernel.listing import MAX_LIMIT, MIN_LIMIT

# A path parameter, with the pattern aiohttp may carry after a colon (`{path:.*}`).
_PATH_PARAM = re.compile(r"{(\w+)(?::[^{}]*)?}")
# Enum members: a value that is a plain name names itself; others are named by their words,
# with a sign before a digit spelt out (`GMT+0`, `GMT-0`).
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Za-z0-9]+|[+-](?=[0-9])")
_SIGNS = {"+": "PLUS", "-": "MINUS"}
STATUS_REF = {"$ref": "#/components/schemas/Status"}
ERRORS = {
    400: "A value breaks a rule: the message names the field (`<field>: <message>`)",
    401: "No valid token, or its session has ended",
    403: "Authenticated, but not permitted",
    404: "Nothing by that ID or path (or not visible to the caller)",
    406: "The body does not have its declared shape (a field missing, unknown or mistyped)",
    408: "The request body did not arrive in time",
    409: "Conflict with the current state",
    412: "A precondition (If-Match, If-Unmodified-Since) does not hold",
    413: "The body (or upload) is too large",
    416: "The range cannot be satisfied",
    429: (
        "Too many attempts (sign-ins, commands, the caller's searches running or waiting),"
        " or a device's writes past `device_write_rate`: wait `Retry-After` seconds"
    ),
    500: "Unexpected error; the body carries only the request ID",
    502: "The device answered with a reply that is not valid (a command)",
    503: "The server cannot serve now (too many connections from this address, or not ready)",
    504: "The device did not answer in time (a command)",
    507: "The server's disk is full: nothing was written; retry later",
}
BOOLEAN, TEXT = listing.KIND_TYPES["bool"], listing.KIND_TYPES["text"]
# Query parameters that mean the same wherever they appear.
QUERY_TYPES: dict[str, Schema] = {
    **dict.fromkeys(
        (
            "force",
            "permanent",
            "cascade",
            "paths_only",
            "verify",
            "object_count",
            "page_count",
            "desc",
            "ids_only",
            "include_inactive_groups",
            "exclude_admins",
            "redirect",
            "url_only",
            "info_only",
        ),
        BOOLEAN,
    ),
    # Any value, as cache-busting clients send (a time stamp): accepted and ignored.
    "bust_cache": {"type": "string", "description": "Accepted and ignored: nothing is cached"},
    "limit": {"type": "integer", "minimum": MIN_LIMIT, "maximum": MAX_LIMIT, "default": 100},
    "page": {"type": "integer", "minimum": 1, "maximum": listing.MAX_PAGE},
    "last_evaluated_key": {
        "type": "string",
        "description": "The `last_evaluated_key` of the previous page, JSON-encoded",
    },
    "order_by": {"type": "string", "pattern": "\\S"},  # a field's name: never blank
    "search": search.SCHEMA,
    "search_fields": {"type": "string", "description": "Field names, comma-separated"},
    "path_filter": TEXT,
    "expires_in": {"type": "integer", "minimum": 1, "maximum": file_values.MAX_EXPIRES_IN},
    "template_id": TEXT,
    "expires": {"type": "integer", "description": "Signed: when the URL expires (Unix time)"},
    "rights": {"type": "string", "description": "Signed: what the URL allows"},
    "upload_id": {"type": "string", "description": "Signed: the multipart upload"},
    "part_number": {"type": "integer", "minimum": 1, "description": "Signed: the part"},
    "signature": {"type": "string", "description": "The URL's signature"},
    "service": {"type": "string", "description": "The tunnel's service to reach"},
    **dict.fromkeys(("group_id", "project_id", "role_id"), TEXT),
    **dict.fromkeys(("is_group_admin", "is_project_admin"), BOOLEAN),
    "is_online": {**BOOLEAN, "description": "edge's own: devices online (true) or not"},
    "period": {"type": "string", "enum": ["day", "month"], "default": "month"},
    "from": DATE,
    "to": DATE,
}
NO_CONTENT = (101, 204, 304)
# The second tag of every operation beyond the interface (a generated client files an
# operation under its first tag, so its module stays the SDK's).
EXTENSIONS = {
    "name": "extensions",
    "description": f"edge's own operations, beyond interface {INTERFACE_VERSION}: a client of"
    " the interface will not find them on another server",
}


# Documents built, by route list and server URL: an application is made per test, and the
# routes of a process never change. A built document is shared: never change one.
_BUILT: dict[tuple[int, str], tuple[Sequence[Route], dict[str, Any]]] = {}


def build(routes: Sequence[Route], server_url: str) -> dict[str, Any]:
    found = _BUILT.get((id(routes), server_url))
    if found is not None and found[0] is routes:
        return found[1]
    document = _build(routes, server_url)
    _BUILT[(id(routes), server_url)] = (routes, document)
    return document


def _build(routes: Sequence[Route], server_url: str) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    bodies: dict[str, Schema] = {}
    for route in routes:
        operation = _operation(route, bodies)
        paths.setdefault(canonical(route.path), {})[route.method.lower()] = operation
    document: dict[str, Any] = _member_names(
        {
            "openapi": "3.1.0",
            "info": {
                # A generator names its client after the title: `edge-client`, `edge_client`.
                "title": "edge",
                "version": INTERFACE_VERSION,
                "description": "Identity, data, files and device management: interface"
                f" {INTERFACE_VERSION}, served by edge {BUILD_VERSION}. See the"
                " [changelog](/v2/changelog).",
            },
            "servers": [{"url": server_url}],
            "tags": [
                *({"name": tag} for tag in sorted({route.tag for route in routes})),
                EXTENSIONS,
            ],
            "paths": paths,
            "components": {
                "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
                "schemas": {**MODELS, **bodies},
            },
        }
    )
    return document


def _member_names(node: Any) -> Any:
    """A copy of the document in which every string enum with a value that is not a plain
    name (time zones: `Etc/GMT+1`) names its members (`x-enum-varnames`). A generator's own
    names for `GMT+0`, `GMT-0` and `GMT0` are one name: openapi-python-client stops on them
    (or, worse, keeps one member of `Etc/GMT+1` and `Etc/GMT-1`)."""
    if isinstance(node, list):
        return [_member_names(item) for item in node]
    if not isinstance(node, dict):
        return node
    found = {key: _member_names(value) for key, value in node.items()}
    values = node.get("enum")
    if isinstance(values, list) and all(isinstance(value, str) for value in values):
        if not all(_PLAIN.fullmatch(value) for value in values):
            found["x-enum-varnames"] = member_names(values)
    return found


def member_names(values: Sequence[str]) -> list[str]:
    """`Etc/GMT+1` -> `ETC_GMT_PLUS_1`, `America/Port-au-Prince` -> `AMERICA_PORT_AU_PRINCE`;
    each name once (a later clash gets `_2`, `_3`)."""
    names: list[str] = []
    taken: set[str] = set()
    for value in values:
        words = [_SIGNS.get(word, word.upper()) for word in _WORD.findall(value)]
        name = "_".join(words) if words and words[0][0].isalpha() else "_".join(["VALUE", *words])
        unique, count = name, 1
        while unique in taken:
            count += 1
            unique = f"{name}_{count}"
        taken.add(unique)
        names.append(unique)
    return names


def has_path_parameter(path: str) -> bool:
    """Whether a route's path takes a parameter (which a client may spell as it likes)."""
    return _PATH_PARAM.search(path) is not None


def canonical(path: str) -> str:
    """A route's path as documented: `{path:.*}` (a parameter that spans slashes) is `{path}`."""
    return _PATH_PARAM.sub(lambda m: "{" + m.group(1) + "}", path)


def _operation(route: Route, bodies: dict[str, Schema]) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": route.name,
        "summary": route.summary,
        "tags": [route.tag, EXTENSIONS["name"]] if route.extension else [route.tag],
        "parameters": _parameters(route),
        "responses": _responses(route),
    }
    if route.description:
        operation["description"] = route.description
    if route.auth != "public":
        operation["security"] = [{"bearer": []}]
    if route.body is not None:
        media = {
            "json": "application/json",
            "form": "application/x-www-form-urlencoded",
            "multipart": "multipart/form-data",
        }[route.body_type]
        schema = _named(route.body, bodies)
        # A form that requires no field may be left out (the SDK sends none to remove MFA).
        required = route.body_type != "form" or bool(route.body.get("required"))
        operation["requestBody"] = {"required": required, "content": {media: {"schema": schema}}}
    return operation


def _named(schema: Any, bodies: dict[str, Schema]) -> Any:
    """A body schema with each titled object in it (CreateGroupBody, GetDataJob) moved to
    the components under its title, as the SDK names its models. The routes' own schemas,
    which the body reader validates against, stay as they are."""
    if isinstance(schema, list):
        return [_named(item, bodies) for item in schema]
    if not isinstance(schema, dict):
        return schema
    named = {key: _named(value, bodies) for key, value in schema.items()}
    title = schema.get("title")
    if not isinstance(title, str) or title in MODELS or bodies.get(title, named) != named:
        return named
    bodies[title] = named
    return {"$ref": f"#/components/schemas/{title}"}


def query_names(route: Route) -> list[str]:
    """Every query parameter the route takes: "list" stands for the list engine's own. An
    operator may also be written with a dot (`created_date.gte`, as the SDK sends it); the
    document names the underscore spelling alone."""
    names: list[str] = []
    for name in route.query:
        names.extend(listing.COMMON if name == "list" else (name,))
    names.extend(route.query_types)
    in_path = set(_PATH_PARAM.findall(route.path))
    return [name for name in dict.fromkeys(names) if "." not in name and name not in in_path]


def query_type(route: Route, name: str) -> Schema:
    found = route.query_types.get(name) or QUERY_TYPES.get(name)
    if found is None:
        raise LookupError(f"{route.method} {route.path}: query parameter {name} has no type")
    return found


def _parameters(route: Route) -> list[dict[str, Any]]:
    found = [
        {"name": name, "in": "path", "required": True, "schema": route.query_types.get(name, TEXT)}
        for name in _PATH_PARAM.findall(route.path)
    ]
    found.extend(
        {"name": name, "in": "query", "schema": query_type(route, name)}
        for name in query_names(route)
    )
    found.extend(
        {
            "name": name,
            "in": "header",
            "description": text,
            "schema": route.header_types.get(name, TEXT),
        }
        for name, text in route.headers.items()
    )
    return found


def _responses(route: Route) -> dict[str, Any]:
    out = {str(code): _response(route, code, name) for code, name in route.responses.items()}
    for code in errors(route):
        error: dict[str, Any] = {"description": ERRORS[code]}
        if route.method != "HEAD":
            error["content"] = {"application/json": {"schema": STATUS_REF}}
        out.setdefault(str(code), error)
    return out


def _response(route: Route, code: int, name: str) -> dict[str, Any]:
    if code in NO_CONTENT or 300 <= code < 400 or route.method == "HEAD" or not route.response_type:
        return {"description": name}
    if route.response_type != "application/json":  # one or several (`"text/css | image/png"`)
        kinds = [kind.strip() for kind in route.response_type.split("|")]
        return {"description": name, "content": {kind: {"schema": _text(kind)} for kind in kinds}}
    return {"description": name, "content": {"application/json": {"schema": model_schema(name)}}}


def _text(kind: str) -> Schema:
    if kind.startswith("text/") or kind == "application/x-pem-file":  # */*: the file's own
        return {"type": "string"}
    return {"type": "string", "format": "binary"}


def model_schema(name: str) -> Schema:
    """`"A | B"`: either model; every name must be one of api/models.py's."""
    names = [n.strip() for n in name.split("|")]
    for each in names:
        if each not in MODELS:
            raise LookupError(f"{each} is not a model of api/models.py")
    refs = [{"$ref": f"#/components/schemas/{n}"} for n in names]
    return refs[0] if len(refs) == 1 else {"anyOf": refs}


def errors(route: Route) -> list[int]:
    """The error codes an operation can return: those every operation of its kind can,
    and its own (`Route.errors`)."""
    codes = {500, 503, *route.errors}
    if route.auth != "public":
        codes |= {401, 403}
    if route.body is not None:  # read by api/bodies.py: a rule, time, size, shape
        codes |= {400, 406, 408, 413}
    if route.query or (route.method in WRITES and route.auth != "public"):  # api/routing.py
        codes.add(400)
    if has_path_parameter(route.path):  # api/middleware.py, `utf8_escapes`: `%FF` in it
        codes.add(400)
    if "list" in route.query and "search" in query_names(route):  # the list engine's search:
        codes.add(429)  # past the caller's share of the search worker (edge/kernel/listing.py)
    if has_path_parameter(route.path) and route.auth != "public":
        codes.add(404)
    if route.method not in ("GET", "HEAD"):
        codes.add(507)
    if route.method in WRITES and route.auth == "token":  # a device's pace (api/routing.py)
        codes.add(429)
    return sorted(codes)
