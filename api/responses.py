"""JSON answers: the one place a response body is encoded.

Encoded with orjson: the standard library's encoder took about 40 us for a 1.5 KB user
(a tenth of a GET's CPU), orjson about 3 us. orjson refuses an integer past 64 bits: such
integers are then written as their decimal text (orjson Fragments), so an answer that also
holds stored JSON text as Fragments (a data entry, edge/data/views.py) still encodes. What
orjson refuses beyond that (a string holding a lone surrogate, a key that is not a string)
goes to `json.dumps`, so no answer that the standard encoder could give becomes an error.
The output is compact and UTF-8 (non-ASCII characters are not escaped); both are the same
JSON to any client.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson
from aiohttp import web

_ORJSON_INTS = range(-(2**63), 2**64)  # what orjson writes as integers
# For an answer no cache may keep: a secret, a signed URL that expires, a temporary redirect.
NO_STORE = {"Cache-Control": "no-store"}


def encode(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        pass
    try:
        return orjson.dumps(_wide_ints_as_text(value))
    except TypeError:
        return json.dumps(value).encode()


def _wide_ints_as_text(value: Any) -> Any:
    """The value with every integer orjson cannot write made a Fragment of its digits
    (values are at most 64 levels deep: the body reader's limit)."""
    if isinstance(value, int) and not isinstance(value, bool) and value not in _ORJSON_INTS:
        return orjson.Fragment(str(value))
    if isinstance(value, dict):
        return {key: _wide_ints_as_text(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_wide_ints_as_text(item) for item in value]
    return value


def json_response(
    data: Any, *, status: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    return web.Response(
        body=encode(data),
        status=status,
        headers=headers,
        content_type="application/json",
        charset="utf-8",
    )
