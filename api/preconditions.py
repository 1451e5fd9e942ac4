"""`If-Match` as the extensions read it: the version (a twin's) or revision (a data
entry's) a conditional write was made against, as the resource's ETag gave it."""

from __future__ import annotations

from aiohttp import web

from edge.kernel.errors import ValidationError


def if_match(request: web.Request, what: str) -> int | None:
    """The number `If-Match` names (`"3"`, `W/"3"` or `3`); None when absent or `*`.
    `what` names the number in the 400 (`the twin's version`)."""
    raw = request.headers.get("If-Match")
    if raw is None or raw.strip() == "*":
        return None
    text = raw.strip().removeprefix("W/").strip('"')
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise ValidationError("If-Match", f"must be {what}, as its ETag gives it")
    return int(text)
