"""The media type of a binary answer with a type of its own (a CRL, a zip archive, PKCS#7):
its own type, or `application/octet-stream` for a client that asks for that and not for
the own type. A client generated from the OpenAPI document knows octet-stream and none of
the others, so each such route documents both (`either`)."""

from __future__ import annotations

from aiohttp import hdrs, web

BINARY = "application/octet-stream"


def either(own: str) -> str:
    """The route's `response_type`: its own type, or octet-stream."""
    return f"{own} | {BINARY}"


def chosen(request: web.Request, own: str) -> str:
    """The type to answer with, from the request's Accept (parameters of `own`, such as
    PKCS#7's `smime-type`, stay with it)."""
    asked = {
        part.partition(";")[0].strip().lower()
        for part in request.headers.get(hdrs.ACCEPT, "").split(",")
    }
    bare = own.partition(";")[0].strip()
    return BINARY if BINARY in asked and bare not in asked else own
