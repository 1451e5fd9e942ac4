"""What schemathesis' coverage phase found (`make test-long`), each pinned here so that
`make test` keeps it: the server and the OpenAPI document disagreed on a request."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from api import openapi
from edge.app import ROUTES
from tests.world import World


def document() -> dict[str, Any]:
    return openapi.build(ROUTES, "/")


def operation(doc: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    found: dict[str, Any] = doc["paths"][path][method.lower()]
    return found


def test_removing_mfa_takes_no_body() -> None:
    """The SDK sends none, and the server needs none (its form requires nothing): the
    document required one."""
    doc = document()
    for path in ("/v2/auth/mfa/software", "/v2/auth/mfa/sms"):
        assert operation(doc, "DELETE", path)["requestBody"]["required"] is False
    assert operation(doc, "POST", "/v2/auth/token")["requestBody"]["required"] is True


def test_bust_cache_is_documented_as_any_value() -> None:
    """Accepted and ignored whatever it holds (a time stamp, as cache-busting clients
    send): the document said boolean, and `bust_cache=AAA` was a schema-violating request
    the server accepted."""
    params = operation(document(), "GET", "/v2/groups")["parameters"]
    [bust] = [p for p in params if p["name"] == "bust_cache"]
    assert bust["schema"]["type"] == "string"


async def test_an_empty_order_by_is_a_400(world: World) -> None:
    """`order_by=` was read as the default order; the document allows only field names."""
    for path in ("/v2/devices", "/v2/roles", "/v2/groups"):
        status, body = await world.call("org_admin", "GET", path, params={"order_by": ""})
        assert (status, body) == (400, {"message": "order_by: must name a field to sort by"}), path


async def test_a_search_field_users_do_not_have_is_a_400_without_a_search(world: World) -> None:
    """It was checked only when `search` came with it."""
    status, body = await world.call(
        "org_admin", "GET", "/v2/users", params={"search_fields": "\x84"}
    )
    assert status == 400 and body["message"].startswith("search_fields: '\x84' is not searchable")


async def test_a_blank_widget_type_is_documented_as_refused(world: World) -> None:
    """The document allowed any string; the server refuses a blank one (a 400 naming it,
    as for every rule beyond a body's shape)."""
    widget = {"order": 0, "widget_type": " ", "widget_title": "", "config": {}}
    status, body = await world.call(
        "org_admin", "PUT", "/v2/account/dashboard", json={"widgets": [widget]}
    )
    assert (status, body) == (400, {"message": "widgets.0.widget_type: must not be empty"})
    assert "\\S" in str(operation(document(), "PUT", "/v2/account/dashboard"))


def test_a_null_alias_is_documented_as_allowed() -> None:
    """The server takes `alias: null` (no alias); the document's `not` (an ID-shaped
    pattern, which null passes vacuously) refused it."""
    schema = document()["components"]["schemas"]["CreateProjectBody"]["properties"]["alias"]
    validator = Draft202012Validator(schema)
    assert validator.is_valid(None) and validator.is_valid("apollo")
    assert not validator.is_valid("AbCdEfGhIjKlMnOp")  # shaped like an ID


def test_order_by_is_documented_as_never_blank_everywhere() -> None:
    for path, methods in document()["paths"].items():
        for method, found in methods.items():
            for param in found.get("parameters", []):
                if param["name"] == "order_by":
                    schema = Draft202012Validator(param["schema"])
                    assert not schema.is_valid(""), (method, path)


def test_a_widget_order_is_documented_within_32_bits() -> None:
    """The server refuses an order past 32 bits (a 400); the document allowed any integer,
    which fuzzing found once the widget's other fields were documented."""
    body = operation(document(), "PUT", "/v2/account/dashboard")["requestBody"]
    schema = body["content"]["application/json"]["schema"]
    order = schema["properties"]["widgets"]["items"]["properties"]["order"]
    assert (order["minimum"], order["maximum"]) == (-(2**31), 2**31 - 1)
