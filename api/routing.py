"""Route declarations: method, path, handler, who may call it, and what it documents.

Each `api/<resource>.py` ends with its ROUTES list, below the handlers it names, each
route with its guard. The guard here authenticates the caller for every non-public route,
so no handler can forget to; the OpenAPI document is generated from the same declarations.
What kind of secret a bearer token is (access token, challenge session, reset token, API
key) is decided by edge/auth/bearer.py from the token and the guard's `Auth`:

- "token":     an access token, or a device's API key (as bearer or `X-API-Key`), or with
               neither, over HTTPS, a device's client certificate from the site CA;
- "staff":     an access token whose caller is staff (a device never is);
- "challenge": an access token, or the session of a sign-in challenge (MFA setup calls);
- "session":   only the session of a sign-in challenge (answering it);
- "password":  an access token, or a password reset token (as bearer or form field).

A write (PUT, POST, PATCH, DELETE) takes the query parameters its route declares and no
other, each once: anything else is a 400 here, once the caller is known. Reads check
their own (api/listing.py: lists take many, named by their fields), and so do the public
writes: a presigned URL's query is what its signature covers (any change is a 403), and
the sign-in forms read their fields from the body.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from aiohttp import HttpVersion11, hdrs, web

from api import bodies, params
from api.keys import PRINCIPAL, SERVICES
from edge.auth import bearer
from edge.auth.bearer import Kind
from edge.auth.challenges import RESTART
from edge.kernel.errors import Denied, Unauthenticated
from edge.kernel.principal import Principal

Auth = Literal["public", "token", "staff", "challenge", "session", "password"]
ACCEPTS: dict[str, frozenset[Kind]] = {
    "token": bearer.SIGNED_IN,
    "staff": bearer.SIGNED_IN,
    "challenge": bearer.MFA_SETUP,
    "session": bearer.SIGN_IN_STEP,
    "password": bearer.PASSWORD_CHANGE,
}
# When a challenge session is the bearer, the handler finds its row here (and no principal).
CHALLENGE = web.RequestKey("challenge", dict)
# On "password" routes, a reset token the caller presented (as bearer or form field).
RESET_TOKEN = web.RequestKey("reset_token", str)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


# The last part of a route that takes a data or file path: it spans slashes, and line breaks
# too (`.*` stops at one): a path holding one must reach the path rules (a 400 naming
# `path`), not miss the route (a 404 as if the URL were unknown).
PATH_SPAN = r"{path:[\s\S]*}"


@dataclass(frozen=True)
class Route:
    """One operation. What it documents (api/openapi.py) is what it does: `responses` name
    the models of api/models.py it answers with (`"A | B"`: either, by who asks; for other
    content types, a description; `response_type` "" for none, "*/*" for a file's own);
    `errors` the error codes it returns beyond those every
    operation of its kind does (api/openapi.py, `_errors`); `query_types` the JSON Schema of
    a query (or path) parameter where api/openapi.py's table does not know it; `headers` the
    request headers it reads (documented as header parameters); `operation_id` the
    SDK's function name (default: the handler's name)."""

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
    operation_id: str | None = None
    description: str = ""
    query_types: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    errors: Sequence[int] = ()
    # Request headers the operation reads besides the credentials': name -> description.
    headers: Mapping[str, str] = field(default_factory=dict)
    # Their schemas where a plain string does not say it (the document's header parameters).
    header_types: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    # The handler answers `Expect: 100-continue` itself (bodies.go_on), once it has checked
    # what it can before the body: a refusal then reaches the client before its body goes.
    continue_later: bool = False
    # Edge's own, beyond interface v2.3.18: the document tags it `extensions`, so a reader
    # can tell what a client of the interface will not find elsewhere.
    extension: bool = False
    # Its GET is not safe (RFC 9110 9.2.1: it issues something each time), so no HEAD is
    # added beside it: a HEAD must change nothing, and would throw away what it issued.
    head: bool = True

    @property
    def name(self) -> str:
        return self.operation_id or self.handler.__name__


def bearer_token(request: web.Request) -> str | None:
    return bearer.from_header(request.headers.get("Authorization"))


def _api_key_header(request: web.Request, accepts: frozenset[Kind]) -> str | None:
    """A device's API key sent as `X-API-Key` (where keys are taken)."""
    key = bearer.from_header(_as_bearer(request.headers.get("X-API-Key")))
    if key is not None and not bearer.is_api_key(key):
        raise Unauthenticated("Invalid API key")
    return key if key is not None and Kind.API_KEY in accepts else None


def _as_bearer(value: str | None) -> str | None:
    return f"Bearer {value}" if value else None


def principal(request: web.Request) -> Principal:
    found = request.get(PRINCIPAL)
    if not isinstance(found, Principal):
        raise Unauthenticated("Authentication required")
    return found


def still_signed_in(request: web.Request) -> bool:
    """Whether the credentials this request came with still hold (its session not revoked,
    its account not suspended, its token not expired): what a response that stays open asks
    again while it runs (api/events.py). Cached like every verification, so cheap."""
    token = presented_token(request)
    if token is None:
        der = client_certificate(request)
        logins = request.app[SERVICES].certificate_logins
        return der is not None and logins.accepted(der) is not None
    services = request.app[SERVICES]
    try:
        if bearer.kind_of(token, bearer.SIGNED_IN) is Kind.ACCESS_TOKEN:
            services.tokens.verify(token)
        else:
            services.device_keys.verify(token)
    except Unauthenticated:
        return False
    return True


def presented_token(request: web.Request) -> str | None:
    """The token a "token" route's request came with (an API key, as `X-API-Key` or
    bearer, or an access token), or None when its credential is a client certificate."""
    return _api_key_header(request, bearer.SIGNED_IN) or bearer_token(request)


def _guard(route: Route) -> Handler:
    accepts = ACCEPTS[route.auth]

    async def guarded(request: web.Request) -> web.StreamResponse:
        reset = await _reset_token_field(request, route)
        if reset is not None:
            request[RESET_TOKEN] = reset
            return await route.handler(request)
        token = _api_key_header(request, accepts) or bearer_token(request)
        if token is None:
            request[PRINCIPAL] = _by_certificate(request, route)
        else:
            _by_token(request, route, token, accepts)
        _paced(request)
        return await route.handler(request)

    return guarded


def _by_token(request: web.Request, route: Route, token: str, accepts: frozenset[Kind]) -> None:
    """The caller a token names, kept on the request as the kind of token says."""
    kind = bearer.kind_of(token, accepts)
    if kind is Kind.ACCESS_TOKEN:
        # Known before the staff check: a refused request counts for the caller's org
        # in the pulse (docs/pulse.md), which reads the principal.
        who = request[PRINCIPAL] = request.app[SERVICES].tokens.verify(token)
        if route.auth == "staff" and not who.is_staff:
            raise Denied("Only staff may do this")
    elif kind is Kind.CHALLENGE_SESSION:
        request[CHALLENGE] = request.app[SERVICES].signin.challenges.require(token)
    elif kind is Kind.RESET_TOKEN:
        request[RESET_TOKEN] = token
    else:  # a device's API key: the fast path, no token verification
        request[PRINCIPAL] = request.app[SERVICES].device_keys.verify(token)
        if route.auth == "staff":
            raise Denied("Only staff may do this")


def _paced(request: web.Request) -> None:
    """A device's write takes one from its bucket (edge/devices/write_rate.py): here,
    where every credential has become its caller and before the handler writes, so no
    route of a device escapes it; a 429 past it, and nothing written."""
    who = request.get(PRINCIPAL)
    if isinstance(who, Principal) and who.kind == "device" and request.method in WRITES:
        request.app[SERVICES].device_writes.take(who.account_id)


def client_certificate(request: web.Request) -> bytes | None:
    """The client certificate the TLS handshake verified (HTTPS asks for an optional one
    from the site CA, edge/ops/tls.py), as DER; None over plain HTTP or without one."""
    transport = request.transport
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    if ssl_object is None:
        return None
    der = ssl_object.getpeercert(binary_form=True)
    return der if isinstance(der, bytes) else None


def _by_certificate(request: web.Request, route: Route) -> Principal:
    """With no token, a device's client certificate is its credential where a device's
    API key would be: a superseded or revoked one (or its suspended device) is a 401."""
    der = client_certificate(request)
    if der is None or Kind.API_KEY not in ACCEPTS[route.auth] or route.auth == "staff":
        raise Unauthenticated(RESTART if route.auth == "session" else bearer.REQUIRED)
    return request.app[SERVICES].certificate_logins.principal(der)


async def _reset_token_field(request: web.Request, route: Route) -> str | None:
    """On "password" routes a reset token may come as the form field `reset_token` (it
    then wins over the bearer). The form is read once; aiohttp keeps it for the handler."""
    if route.auth != "password" or route.body is None or not request.body_exists:
        return None
    if request.content_type not in bodies.FORM_TYPES:
        return None
    form = await bodies.read_form(request, route.body)
    return form.get("reset_token") or None


Expect = Callable[[web.Request], Awaitable[None]]
Prepared = list[tuple[str, str, Handler, Expect | None]]
# What `register` adds for a route table, by the table's id, with the routes it held then:
# the handlers hold no application (they find it on the request), so every application
# built from the same routes shares them.
_PREPARED: dict[int, tuple[tuple[Route, ...], Prepared]] = {}


def register(app: web.Application, routes: Sequence[Route]) -> None:
    for method, path, handler, expect in _prepared(routes):
        app.router.add_route(method, path, handler, expect_handler=expect)


def _prepared(routes: Sequence[Route]) -> Prepared:
    """Each route's method, path, guarded handler and expect handler, made once a process
    for a table (the server builds one application; the test suite thousands), and again
    when the table's routes are no longer the very ones it was made from."""
    held = tuple(routes)
    found = _PREPARED.get(id(routes))
    if found is not None and len(found[0]) == len(held):
        if all(a is b for a, b in zip(found[0], held, strict=True)):
            return found[1]
    prepared: Prepared = []
    for route in with_heads(held):
        route = _query_checked(route)
        handler = route.handler if route.auth == "public" else _guard(route)
        expect = _continue_later if route.continue_later else None
        prepared.append((route.method, route.path, handler, expect))
    _PREPARED[id(routes)] = (held, prepared)
    return prepared


def with_heads(routes: Sequence[Route]) -> Iterator[Route]:
    """The routes, each GET followed by its HEAD: RFC 9110 asks every GET resource to answer
    HEAD with the same status and headers and no body (aiohttp then sends none). Registered
    right after its GET, the HEAD shares its resource. Not added where a HEAD of its own is
    declared (downloads, health), nor to a WebSocket upgrade (its only answer is 101, and
    only a GET can upgrade: RFC 6455), nor to a GET that issues something each time
    (`head=False`: a device's bundle). The OpenAPI document lists only the declared HEADs
    (docs/openapi.md says why)."""
    declared = {route.path for route in routes if route.method == "HEAD"}
    for route in routes:
        yield route
        upgrade = 101 in route.responses  # its only success; its refusals are HTTP
        if route.method == "GET" and route.path not in declared and not upgrade and route.head:
            yield replace(route, method="HEAD")


WRITES = frozenset({"PUT", "POST", "PATCH", "DELETE"})


def _query_checked(route: Route) -> Route:
    """The route whose handler first refuses a query parameter it does not declare: a
    misspelt `?cascade` or `?force` would otherwise be ignored, and the write done as
    if it had not been asked for."""
    if route.method not in WRITES or route.auth == "public":  # see the module's docstring
        return route
    declared, handle = tuple(route.query), route.handler

    async def checked(request: web.Request) -> web.StreamResponse:
        params.only(request.query, declared)
        return await handle(request)

    checked.__name__ = handle.__name__  # the route's name (operation id) stays the handler's
    return replace(route, handler=checked)


def allowed_methods(request: web.Request) -> str:
    """The `Allow` of a 405: the methods of the route whose path matched, the first aiohttp
    tries (the longest literal start first, then in the order added). aiohttp lists those of
    every route whose path matches: `/v2/devices/root-ca.pem` allowed DELETE and PATCH, the
    methods of `/v2/devices/{device_id}`. Read from the router, so every route counts."""
    path = request.rel_url.path_safe
    resources = request.app.router.resources()
    for resource in sorted(resources, key=_tried_late):
        info = resource.get_info()
        pattern = info.get("pattern")
        if info.get("path") == path or (pattern is not None and pattern.fullmatch(path)):
            same = (r for r in resources if r.canonical == resource.canonical)  # added apart
            return ",".join(sorted({route.method for r in same for route in r}))
    return ""


def _tried_late(resource: web.AbstractResource) -> int:
    """aiohttp looks a path up by its literal start, longest first (`/v2/devices/root-ca.pem`
    before `/v2/devices` + `{device_id}`): the shorter, the later (a stable sort keeps the
    order of registration among equals)."""
    literal = resource.canonical.partition("{")[0]
    if "{" in resource.canonical:
        literal = literal.rpartition("/")[0]
    return -len(literal.rstrip("/") or "/")


async def _continue_later(request: web.Request) -> None:
    """aiohttp answers `Expect: 100-continue` before the handler runs, so a client sends a
    body (gigabytes, for an upload) that the handler then refuses unread; on these routes
    the handler sends it (bodies.go_on). Any other expectation fails, as aiohttp's does."""
    expect = request.headers.get(hdrs.EXPECT, "")
    if request.version == HttpVersion11 and expect.lower() != "100-continue":
        raise web.HTTPExpectationFailed(text=f"Unknown Expect: {expect}")
