"""`If-Match` as the extensions read it: the version (a twin's) or the ETag (a data
entry's) a conditional write was made against, as the resource's ETag gave it."""

from __future__ import annotations

from aiohttp import web

from edge.kernel.errors import ValidationError


def if_match(request: web.Request, what: str) -> int | None:
    """The number `If-Match` names (`"3"`, `W/"3"` or `3`); None when absent or `*`.
    `what` names the number in the 400 (`the twin's version`)."""
    text = if_match_text(request)
    if text is None:
        return None
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise ValidationError("If-Match", f"must be {what}, as its ETag gives it")
    return int(text)


def if_match_text(request: web.Request) -> str | None:
    """The ETag `If-Match` names, without its quotes or `W/`; None when absent or `*`."""
    raw = request.headers.get("If-Match")
    if raw is None or raw.strip() == "*":
        return None
    return raw.strip().removeprefix("W/").strip('"')
