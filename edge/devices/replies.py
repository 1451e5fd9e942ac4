"""The server's replies to a device's requests over MQTT (twins, jobs): the code a
refusal carries, as the HTTP status of the same refusal would be (api/errors.py is the
map for HTTP; this is its counterpart on a device's reply topics), and the echo of the
request's `client_token`.
"""

from __future__ import annotations

from typing import Any

from edge.kernel import errors, json_text

MAX_CLIENT_TOKEN = 64  # characters; a request with a longer one is rejected
CODES: tuple[tuple[type[errors.EdgeError], int], ...] = (
    (errors.ValidationError, 400),
    (errors.Denied, 403),
    (errors.NotFound, 404),
    (errors.SchemaError, 406),
    (errors.Conflict, 409),
    (errors.TooLarge, 413),
)


def code_of(exc: errors.EdgeError) -> int:
    for cls, code in CODES:
        if isinstance(exc, cls):
            return code
    return 400


def with_token(body: dict[str, Any], client_token: Any) -> dict[str, Any]:
    """Echo only a token the request could have carried: an over-long one (refused, and
    named in the message) is not copied back, so a reply never amplifies a request."""
    if isinstance(client_token, str) and len(client_token) <= MAX_CLIENT_TOKEN:
        return {**body, "client_token": client_token}
    return body


def request_body(payload: bytes) -> dict[str, Any]:
    """A request's JSON object; an empty payload (a bare `get`) is `{}`."""
    if not payload.strip():
        return {}
    body = json_text.parse(payload, field="payload")
    if not isinstance(body, dict):
        raise errors.SchemaError("payload: must be a JSON object")
    return body
