"""`If-Match` as the extensions read it: the version (a twin's) or the ETag (a data
entry's) a conditional write was made against, as the resource's ETag gave it."""

from __future__ import annotations

from aiohttp import web

from edge.kernel.errors import ValidationError


def if_match(request: web.Request, what: str) -> int | None:
    """The number `If-Match` names (`"3"` or `3`); None when absent or `*`.
    `what` names the number in the 400 (`the twin's version`)."""
    text = if_match_text(request)
    if text is None:
        return None
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise ValidationError("If-Match", f"must be {what}, as its ETag gives it")
    return int(text)


def if_match_text(request: web.Request) -> str | None:
    """The ETag `If-Match` names, without its quotes; None when absent or `*`.

    A weak tag (`W/"3"`) is a 400: If-Match compares strongly (RFC 9110 13.1.1), so a
    weak tag never matches, and the ETags given here are all strong: one can only come
    from a client or a cache that weakened ours. Its 400 names the rule, where the 409
    of a mismatch would name a version equal to the one the caller sent (#29)."""
    raw = request.headers.get("If-Match")
    if raw is None or raw.strip() == "*":
        return None
    text = raw.strip()
    if text.startswith("W/"):
        raise ValidationError(
            "If-Match",
            "must be a strong ETag, as the ETag header gives it: If-Match compares"
            " strongly (RFC 9110), so a weak one (W/...) never matches",
        )
    return text.strip('"')
