"""The one encoder of JSON answers (api/responses.py): orjson, with what it refuses still
written, stored JSON text (Fragments) included."""

from __future__ import annotations

import json

import orjson

from api.responses import encode


def test_an_integer_past_64_bits_beside_stored_text() -> None:
    body = {"stored": orjson.Fragment('{"a":[1,2]}'), "wide": [2**64, -(2**63) - 1, 2**64 - 1]}
    assert json.loads(encode(body)) == {
        "stored": {"a": [1, 2]},
        "wide": [2**64, -(2**63) - 1, 2**64 - 1],
    }


def test_what_orjson_refuses_otherwise_still_goes_out() -> None:
    assert json.loads(encode({1: "a", "b": 2**70})) == {"1": "a", "b": 2**70}
