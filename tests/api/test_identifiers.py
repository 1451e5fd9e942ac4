"""Names that identify refuse control, bidirectional-formatting and separator characters;
free text keeps every character it was given, and never breaks a log line."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from aiohttp import web

from edge.kernel import fields
from edge.kernel.printable import for_log
from tests.tenants import Tenant

REFUSED = "must not contain control, bidirectional-formatting or separator characters"
SNEAKY = ["ad\x00min", "ad\nmin", "evil\u202egnp.exe", "a\u2066b\u2069", "tab\there", "\x1b[31mred"]


@pytest.mark.parametrize("value", SNEAKY)
@pytest.mark.parametrize("field", ["username", "email", "first_name", "nickname"])
async def test_user_identifiers_refuse_invisible_characters(
    tenant: Tenant, field: str, value: str
) -> None:
    token = await tenant.token()
    body = {"username": "plain", "email": "plain@clinic.test"}
    body[field] = value + ("@clinic.test" if field == "email" else "")
    status, reply = await tenant.api.call("POST", "/v2/users", token, json=body)
    assert (status, reply) == (400, {"message": f"{field}: {REFUSED}"})


@pytest.mark.parametrize("path", ["/v2/projects", "/v2/groups", "/v2/roles"])
async def test_resource_names_refuse_invisible_characters(tenant: Tenant, path: str) -> None:
    token = await tenant.token()
    status, reply = await tenant.api.call("POST", path, token, json={"name": "Ward\u202e7"})
    assert (status, reply) == (400, {"message": f"name: {REFUSED}"})


async def test_free_text_is_kept_exactly(tenant: Tenant) -> None:
    token = await tenant.token()
    text = "line one\nline two\t\u202eright-to-left\x00 and NUL"
    attributes = {"note": text, "k\u2066": "v"}
    body = {"username": "keeper", "email": "keeper@clinic.test", "custom_attributes": attributes}
    status, reply = await tenant.api.call("POST", "/v2/users", token, json=body)
    assert status == 201, reply
    status, user = await tenant.api.call("GET", f"/v2/users/{reply['user']['id']}", token)
    assert status == 200 and user["user"]["custom_attributes"] == attributes
    status, reply = await tenant.api.call(
        "POST", "/v2/groups", token, json={"name": "Team", "description": text}
    )
    assert status == 201, reply


async def test_client_text_never_breaks_a_log_line(
    aiohttp_client: Any, app: web.Application, caplog: pytest.LogCaptureFixture
) -> None:
    async def boom(request: web.Request) -> web.Response:
        raise RuntimeError("internals")

    app.router.add_get("/v2/test-boom/{thing}", boom)
    client = await aiohttp_client(app)
    with caplog.at_level(logging.INFO):
        response = await client.get("/v2/test-boom/x%0AFORGED%20LINE%E2%80%AE%1B[2J")
    assert response.status == 500
    lines = [r.getMessage() for r in caplog.records if r.name == "edge.http"]
    assert lines and all("\n" not in m and "\u202e" not in m and "\x1b" not in m for m in lines)
    assert any("x\\x0aFORGED LINE\\u202e\\x1b[2J" in m for m in lines)


def test_for_log_escapes_and_shortens() -> None:
    assert for_log("a\r\nb\u2028c\ud800") == "a\\x0d\\x0ab\\u2028c\\ud800"
    assert for_log("x" * 300) == "x" * 200 + "..."


@pytest.mark.parametrize("value", ["Zoë", "محمد", "José María", "O'Brien", "李小龍", "ज़ोया"])
def test_real_names_are_identifiers(value: str) -> None:
    assert fields.identifier("first_name", value) == value
