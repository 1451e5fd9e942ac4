"""Interface conventions every endpoint shares: the Status payload and its status codes.

Sweeps the router, so a new route is checked without a new test.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from api.keys import SERVICES
from api.system import HEALTH
from edge.app import ROUTES, create_app
from edge.delivery.alerts import PURPOSE
from edge.ops.health import Probe
from storage import outbox
from tests.conftest import STAFF_EMAIL, Api
from tests.factory import new_site

PROTECTED = [r for r in ROUTES if r.auth != "public"]
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")  # data paths take all five


def concrete(path: str) -> str:
    return re.sub(r"{\w+(?::[^{}]*)?}", "abcdefghijklmnop", path)  # `{path:.*}` too


def pattern(path: str) -> str:
    """A route's path as a regular expression, as aiohttp matches it."""
    return re.sub(r"{\w+(?::([^{}]*))?}", lambda m: m.group(1) or "[^/]+", path)


def assert_status_payload(body: Any) -> None:
    assert isinstance(body, dict) and set(body) == {"message"}, body
    assert isinstance(body["message"], str) and body["message"]


async def test_unknown_route_is_404_json(api: Api) -> None:
    status, body = await api.call("GET", "/v2/no-such-thing")
    assert status == 404
    assert body == {"message": "Not found: GET /v2/no-such-thing"}


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.path}")
async def test_wrong_method_is_405_with_allow(api: Api, route: Any) -> None:
    """`Allow` names the methods of the route whose path aiohttp tried first, and no other:
    where a literal route overlaps one with a parameter (`/v2/devices/root-ca.pem` and
    `/v2/devices/{device_id}`) it listed the methods of both. The method tried is one that
    no route reaching the path takes (`.../access/org` is role access's path too). HEAD,
    where the router answers it, goes with GET."""
    reach = [r for r in ROUTES if re.fullmatch(pattern(r.path), concrete(route.path))]
    first = reach[0].path  # ROUTES are in the router's order
    allowed = {r.method for r in ROUTES if r.path == first}
    taken = {r.method for r in reach}
    wrong = next(m for m in METHODS if m not in taken and not (m == "GET" and "HEAD" in taken))
    response = await api.client.request(wrong, concrete(route.path))
    assert response.status == 405
    assert_status_payload(await response.json())
    allow = set(response.headers["Allow"].split(","))
    assert allow - {"HEAD"} == allowed - {"HEAD"}
    assert "HEAD" not in allow or "GET" in allowed


@pytest.mark.parametrize("route", PROTECTED, ids=lambda r: f"{r.method} {r.path}")
async def test_protected_routes_need_a_token(api: Api, route: Any) -> None:
    status, body = await api.call(route.method, concrete(route.path))
    assert status == 401
    assert_status_payload(body)


@pytest.mark.parametrize("token", ["garbage", "a.b.c", "eyJhbGciOiJub25lIn0.e30."])
async def test_invalid_tokens_are_401(api: Api, token: str) -> None:
    status, body = await api.call("GET", "/v2/orgs", token)
    assert status == 401
    assert_status_payload(body)


async def test_malformed_json_is_400(api: Api, staff_token: str) -> None:
    status, body = await api.call(
        "POST",
        "/v2/orgs",
        staff_token,
        data=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert (status, body) == (400, {"message": "body: is not valid JSON"})


async def test_json_that_is_not_an_object_is_406(api: Api, staff_token: str) -> None:
    status, body = await api.call("POST", "/v2/orgs", staff_token, json=["a"])
    assert (status, body) == (406, {"message": "body: must be a JSON object"})


async def test_wrong_content_type_is_400(api: Api, staff_token: str) -> None:
    status, body = await api.call(
        "POST",
        "/v2/orgs",
        staff_token,
        data=b"name=x",
        headers={"Content-Type": "text/plain"},
    )
    assert status == 400
    assert body == {"message": "Content-Type must be application/json"}


async def test_form_endpoint_rejects_json(api: Api) -> None:
    status, body = await api.call("POST", "/v2/auth/token", json={"grant_type": "password"})
    assert status == 400
    assert "Content-Type" in body["message"]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({}, "name: is required"),
        ({"name": 5}, "name: must be of type string"),
        ({"name": "ok", "colour": "red"}, "colour: is not a known field"),
        ({"name": "ok", "tags": ["a", 1]}, "tags.1: must be of type string"),
    ],
)
async def test_schema_failures_are_406(
    api: Api, staff_token: str, payload: dict[str, Any], message: str
) -> None:
    status, body = await api.call("POST", "/v2/orgs", staff_token, json=payload)
    assert (status, body) == (406, {"message": message})


async def test_value_rule_failures_are_400_naming_the_field(api: Api, staff_token: str) -> None:
    status, body = await api.call(
        "POST", "/v2/orgs", staff_token, json={"name": "ok", "session_expire_mins": 2}
    )
    assert (status, body) == (400, {"message": "session_expire_mins: must be between 3 and 15"})


async def test_conflict_is_409(api: Api, staff_token: str) -> None:
    await api.create_org(staff_token, name="First", alias="same")
    status, body = await api.call(
        "POST", "/v2/orgs", staff_token, json={"name": "Second", "alias": "SAME"}
    )
    assert status == 409
    assert_status_payload(body)


async def test_unknown_list_parameter_is_400(api: Api, staff_token: str) -> None:
    status, body = await api.call("GET", "/v2/orgs?colour=red", staff_token)
    assert (status, body) == (400, {"message": "colour: is not a query parameter of this list"})


async def test_oversized_body_is_413(aiohttp_client: Any, tmp_path: Path) -> None:
    site = new_site(tmp_path / "small", max_body_bytes=2048)
    api = Api(await aiohttp_client(create_app(site)))
    token = await api.token()
    status, body = await api.call(
        "POST", "/v2/orgs", token, json={"name": "big", "description": "x" * 5000}
    )
    assert (status, body) == (413, {"message": "Request body is larger than 2048 bytes"})
    status, _ = await api.call("GET", "/v2/health")
    assert status == 200


async def test_unexpected_error_is_a_safe_500_with_request_id(
    aiohttp_client: Any, app: web.Application, caplog: pytest.LogCaptureFixture
) -> None:
    async def boom(request: web.Request) -> web.Response:
        raise RuntimeError("secret internals /etc/passwd")

    app.router.add_get("/v2/test-boom", boom)
    client = await aiohttp_client(app)
    with caplog.at_level(logging.ERROR, logger="edge.http"):
        response = await client.get("/v2/test-boom", headers={"X-Request-ID": "req-123"})
    body = await response.json()
    assert response.status == 500
    assert body == {"message": "Internal server error (request ID req-123)"}
    assert response.headers["X-Request-ID"] == "req-123"
    assert response.headers.getall("Server") == ["edge"]
    assert "secret internals" in caplog.text and "req-123" in caplog.text


async def test_server_errors_queue_one_operator_mail_per_window(
    aiohttp_client: Any, app: web.Application, caplog: pytest.LogCaptureFixture
) -> None:
    async def boom(request: web.Request) -> web.Response:
        raise RuntimeError("secret internals")

    app.router.add_get("/v2/test-boom/{thing}", boom)
    client = await aiohttp_client(app)
    with caplog.at_level(logging.CRITICAL, logger="edge.http"):
        for n in range(3):
            response = await client.get(f"/v2/test-boom/{n}", headers={"X-Request-ID": f"r{n}"})
            assert response.status == 500
    await app[SERVICES].alerts.drain()
    mails = app[SERVICES].db.read(lambda c: outbox.by_purpose(c, PURPOSE))
    assert len(mails) == 1  # the same route again within the window is not mailed
    mail = mails[0]
    assert mail["recipient"] == STAFF_EMAIL and mail["channel"] == "mail"
    assert mail["subject"] == "edge: 500 on GET /v2/test-boom/{thing}"
    assert "r0" in mail["body_text"] and "secret internals" not in mail["body_text"]


async def test_unavailable_database_is_503_not_ready(api: Api, app: web.Application) -> None:
    app[SERVICES].db.close()
    await Probe(app[SERVICES].db, app[HEALTH]).once()
    status, body = await api.call("GET", "/v2/health/ready")
    assert (status, body) == (
        503,
        {"message": "Not ready: database unavailable, writer unavailable"},
    )


async def test_every_response_carries_a_request_id_and_safe_headers(api: Api) -> None:
    response = await api.client.get("/v2/health")
    assert re.fullmatch(r"[0-9a-f]{32}", response.headers["X-Request-ID"])
    assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v2/version"),
        ("HEAD", "/v2/health"),
        ("GET", "/"),  # a redirect
        ("GET", "/v2/docs/assets/docs.js"),  # a static file
        ("GET", "/v2/no-such-thing"),
        ("DELETE", "/v2/version"),
        ("GET", "/v2/orgs"),  # no token
        ("POST", "/v2/auth/token"),  # a bad form
    ],
)
async def test_answers_name_the_server_edge_and_no_versions(
    api: Api, method: str, path: str
) -> None:
    """Not aiohttp's `Python/3.11 aiohttp/3.x`, which tells a scanner what to try."""
    response = await api.client.request(method, path, allow_redirects=False)
    assert response.headers.getall("Server") == ["edge"]


async def test_catastrophic_regex_is_a_400_not_a_stuck_thread(api: Api, staff_token: str) -> None:
    await api.create_org(staff_token, name="a" * 60 + "b")
    status, body = await api.call("GET", "/v2/orgs", staff_token, params={"name_regex": "(a|aa)+$"})
    assert (status, body) == (
        400,
        {"message": "A regular expression filter took too long; simplify it"},
    )


async def test_a_name_regex_that_would_spell_out_a_huge_repeat_is_a_400(
    api: Api, staff_token: str
) -> None:
    """Compiling `a{1000000000}` spells it out and takes every byte of the machine's memory
    before any time budget begins: refused from its text (edge/kernel/patterns.py), on every
    list."""
    params = {"name_regex": "a{1000000000}"}
    status, body = await api.call("GET", "/v2/orgs", staff_token, params=params)
    assert status == 400 and body["message"].startswith("name_regex: repeats too much"), body


async def test_multipart_without_a_boundary_is_400(api: Api) -> None:
    status, body = await api.call(
        "POST",
        "/v2/auth/token",
        data=b"grant_type=password",
        headers={"Content-Type": "multipart/form-data"},
    )
    assert (status, body) == (400, {"message": "body: is not a valid form"})


async def test_broken_multipart_part_headers_are_400(api: Api, staff_token: str) -> None:
    broken = b"--xyz\r\nNone--xyz--\r\n"
    headers = {"Content-Type": "multipart/form-data; boundary=xyz"}
    status, body = await api.call("POST", "/v2/auth/token", data=broken, headers=headers)
    assert (status, body) == (400, {"message": "body: is not a valid form"})
    status, body = await api.call(
        "PUT", "/v2/account/picture", staff_token, data=broken, headers=headers
    )
    assert status == 400
