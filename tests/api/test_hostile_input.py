"""Bad input gives a clear 400 (or 401, 406, 413) with the Status payload, never a 500,
and nothing is written: deep nesting, NaN and Infinity, lone surrogates, oversized JSON,
and bytes that are not UTF-8 in headers."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from edge.app import Site
from edge.kernel import json_text
from storage.rows import scalar
from tests import wire
from tests.conftest import Api
from tests.tenants import Tenant

JSON = {"Content-Type": "application/json"}


def deep(levels: int, inner: str = "1") -> str:
    return "[" * levels + inner + "]" * levels


def count(site: Site, table: str) -> int:
    return int(site.services.db.read(lambda c: scalar(c, f"SELECT count(*) FROM {table}")))


async def post_raw(api: Api, path: str, token: str, raw: str | bytes) -> tuple[int, Any]:
    data = raw.encode() if isinstance(raw, str) else raw
    return await api.call("POST", path, token, data=data, headers=JSON)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(deep(100_000), "body: is nested more than 64 levels deep", id="deep-top"),
        pytest.param(
            '{"name": "Deep", "description": ' + deep(65, '"x"') + "}",
            "body: is nested more than 64 levels deep",
            id="deep-field",
        ),
        pytest.param('{"name": "\\ud800"}', "name: ", id="surrogate-value"),
        pytest.param('{"name": "ok", "description": "\\udfff"}', "description: ", id="surrogate"),
        pytest.param('{"name": "ok", "tags": ["a", "\\udfff"]}', "tags.1: ", id="surrogate-list"),
        pytest.param('{"name": "ok", "x": NaN}', "body: NaN and Infinity", id="nan"),
        pytest.param('{"name": "ok", "x": -Infinity}', "body: NaN and Infinity", id="infinity"),
        pytest.param('{"name": "ok", "x": 1e999}', "body: NaN and Infinity", id="overflow"),
        pytest.param(b'{"name": "\xff"}', "body: is not valid UTF-8", id="not-utf8"),
    ],
)
async def test_hostile_json_is_400_and_writes_nothing(
    api: Api, site: Site, staff_token: str, body: str | bytes, message: str
) -> None:
    before = count(site, "orgs")
    status, reply = await post_raw(api, "/v2/orgs", staff_token, body)
    assert status == 400, reply
    assert set(reply) == {"message"} and reply["message"].startswith(message)
    assert count(site, "orgs") == before


@pytest.mark.parametrize(
    "attributes",
    [
        pytest.param(deep(50_000), id="deep"),
        pytest.param(deep(70), id="just-too-deep"),
        pytest.param('{"\\ud800": 1}', id="surrogate-key"),
        pytest.param('{"a": "\\udc00"}', id="surrogate-value"),
        pytest.param('{"a": NaN}', id="nan"),
        pytest.param('{"a": Infinity}', id="infinity"),
    ],
)
async def test_custom_attributes_go_through_the_same_reader(
    tenant: Tenant, site: Site, attributes: str
) -> None:
    token = await tenant.token()
    before = count(site, "users")
    raw = (
        '{"username": "newbie", "email": "n@clinic.test", "custom_attributes": ' + attributes + "}"
    )
    status, reply = await post_raw(tenant.api, "/v2/users", token, raw)
    assert status == 400, reply
    assert count(site, "users") == before
    user_id = await tenant.add_user("kept")
    status, reply = await tenant.api.call(
        "PATCH", f"/v2/users/{user_id}", token, data=raw.replace("newbie", "kept"), headers=JSON
    )
    assert status == 400, reply


async def test_nesting_within_the_limit_is_accepted(tenant: Tenant) -> None:
    token = await tenant.token()
    nested: Any = 1
    for _ in range(json_text.MAX_DEPTH - 2):  # the body and custom_attributes are two levels
        nested = {"a": nested}
    body = {"username": "nested", "email": "n@clinic.test", "custom_attributes": nested}
    status, reply = await tenant.api.call("POST", "/v2/users", token, json=body)
    assert status == 201, reply


async def test_json_past_the_size_limit_is_413(api: Api, staff_token: str) -> None:
    raw = ('{"name": "big", "description": "' + "x" * json_text.MAX_BYTES + '"}').encode()
    status, reply = await api.call(
        "POST", "/v2/orgs", staff_token, data=io.BytesIO(raw), headers=JSON
    )
    assert (status, reply) == (
        413,
        {"message": f"Request body is larger than {json_text.MAX_BYTES} bytes"},
    )


async def test_a_lone_surrogate_in_a_form_field_is_400(api: Api) -> None:
    # Percent-encoded surrogates become U+FFFD; raw bytes that are not UTF-8 are refused.
    status, reply = await api.call(
        "POST",
        "/v2/auth/token",
        data=b"grant_type=password&username=\xed\xa0\x80&password=x",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert (status, reply) == (400, {"message": "body: is not a valid form"})


async def raw_request(api: Api, head: bytes) -> tuple[int, bytes]:
    """Send bytes that no HTTP client library would send; the status and the body back."""
    return wire.status_and_body(await wire.reply(api, head + b"Connection: close\r\n\r\n"))


@pytest.mark.parametrize(
    "header",
    [
        b"Authorization: Bearer \xff\xfe\xfd",
        b"Authorization: Bearer eyJ\xc3\x28.e30.sig",
        b"Authorization: \xe2\x82\x28 abc",
    ],
)
async def test_authorization_that_is_not_utf8_is_401(api: Api, header: bytes) -> None:
    for path in (b"/v2/orgs", b"/v2/auth/mfa/secret-code"):
        status, body = await raw_request(
            api, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n"
        )
        assert status == 401, body
        assert set(json.loads(body)) == {"message"}


@pytest.mark.parametrize(
    "header",
    [
        b"X-Request-ID: \xff\xfe",
        b"X-Forwarded-For: \xff\xfe",
        b"Accept: \xff",
        b"User-Agent: \xc3\x28",
        b"Cookie: a=\xff",
    ],
)
async def test_other_headers_that_are_not_utf8_never_give_500(api: Api, header: bytes) -> None:
    for path in (b"/v2/health", b"/v2/orgs", b"/.well-known/security.txt"):
        status, body = await raw_request(
            api, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n"
        )
        assert status < 500, body


async def test_sign_in_with_non_utf8_headers_is_answered(api: Api) -> None:
    form = b"grant_type=password&username=admin&password=nope"
    head = (
        b"POST /v2/auth/token HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: \xff\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: " + str(len(form)).encode() + b"\r\n"
    )
    reply = await wire.reply(api, head + b"Connection: close\r\n\r\n" + form)
    assert reply.startswith(b"HTTP/1.1 400"), reply
