"""The OpenAPI document against the router and the public SDK: every operation, parameter
and response documented, with real types and models, under the SDK's names and modules."""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

import pytest
from aiohttp import web
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from openapi_python_client.strings import snake_case

from api import openapi
from api.routing import Route
from edge.app import ROUTES
from tests.conftest import Api
from tests.documented import Documented

HOW = (
    "declare it as a Route (api/routing.py) in its module's ROUTES, listed in edge/app.py, "
    "with its responses' models (api/models.py)"
)


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return openapi.build(ROUTES, "/")


def _operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method.upper(), path): operation
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    }


def _routed(app: web.Application) -> set[tuple[str, str]]:
    return {
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.resource is not None
    }


async def test_every_routed_operation_is_documented(app: web.Application) -> None:
    """Every GET also answers HEAD (api/routing.py's `with_heads`): those HEADs are implied by
    their GET and not listed (docs/openapi.md says why)."""
    documented = _operations(openapi.build(ROUTES, "/"))
    implied = {("HEAD", path) for method, path in documented if method == "GET"}
    missing = sorted(_routed(app) - set(documented) - implied)
    assert not missing, "Not in the OpenAPI document:\n" + "\n".join(
        f"- {method} {path}: {HOW}" for method, path in missing
    )
    unrouted = sorted(set(documented) - _routed(app))
    assert not unrouted, f"Documented but not routed: {unrouted}"


async def test_the_served_document_is_the_built_one(api: Api, document: dict[str, Any]) -> None:
    status, served = await api.call("GET", "/v2/openapi.json")
    assert status == 200
    assert served["paths"] == document["paths"]
    assert served["components"]["schemas"] == document["components"]["schemas"]


def _route_id(route: Route) -> str:
    return f"{route.method} {route.path}"


@pytest.mark.parametrize("route", ROUTES, ids=_route_id)
def test_every_parameter_is_documented_with_its_type(
    route: Route, document: dict[str, Any]
) -> None:
    operation = _operations(document)[(route.method, openapi.canonical(route.path))]
    params = {(p["in"], p["name"]): p["schema"] for p in operation["parameters"]}
    for name in re.findall(r"{(\w+)", route.path):
        assert ("path", name) in params, f"{_route_id(route)}: path parameter {name}"
    for name in openapi.query_names(route):
        schema = params.get(("query", name))
        assert schema, f"{_route_id(route)}: query parameter {name} is not documented"
        assert "type" in schema or "anyOf" in schema, f"{_route_id(route)}: {name} has no type"


def test_the_event_stream_documents_last_event_id(document: dict[str, Any]) -> None:
    operation = _operations(document)[("GET", "/v2/events")]
    headers = {p["name"]: p for p in operation["parameters"] if p["in"] == "header"}
    assert set(headers) == {"Last-Event-ID"}
    assert headers["Last-Event-ID"]["schema"]["type"] == "string"
    assert "reload" in headers["Last-Event-ID"]["description"]


def test_list_parameters_carry_their_ranges(document: dict[str, Any]) -> None:
    operation = _operations(document)[("GET", "/v2/groups")]
    params = {p["name"]: p["schema"] for p in operation["parameters"]}
    assert params["limit"] == {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}
    assert params["object_count"] == {"type": "boolean"}
    assert params["bust_cache"]["type"] == "string"  # any value is taken (a cache buster)
    assert params["is_active"] == {"type": "boolean"}
    assert params["created_date_gte"]["format"] == "date-time"
    assert params["name_regex"] == {"type": "string", "format": "regex", "maxLength": 256}
    assert "name" in params["order_by"]["enum"] and "tags" not in params["order_by"]["enum"]


def test_date_and_time_filters_carry_their_format(document: dict[str, Any]) -> None:
    """A date filter is typed `format: date-time` (the SDK's type) at its top, where every
    generator reads it: behind `anyOf` most make it a plain string. Billing's `from` and `to`
    are days (`format: date`)."""
    untyped, typed = [], 0
    for (method, path), operation in _operations(document).items():
        for param in operation["parameters"]:
            schema = param["schema"]
            if "'format': 'date" not in str(schema) or param["in"] != "query":
                continue
            if schema.get("type") == "string" and schema.get("format") in ("date-time", "date"):
                typed += 1
            else:
                untyped.append(f"{method} {path} {param['name']}: {schema}")
    assert not untyped, "\n".join(untyped[:20])
    assert typed > 100


def test_enum_members_have_names_of_their_own(document: dict[str, Any]) -> None:
    """The names a generator gives enum members (openapi-python-client's own rule): time
    zones such as `GMT+0`, `GMT-0` and `GMT0` need `x-enum-varnames`, or they clash."""
    clashes = []
    for schema in _schemas(document):
        values = schema.get("enum")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            continue
        names = schema.get("x-enum-varnames") or [v.upper() for v in values]
        assert len(names) == len(values)
        generated = [snake_case(name).upper() for name in names]
        if len(set(generated)) != len(generated):
            clashes.append(values[:3])
    assert not clashes


def test_the_dashboard_states_the_services_rules(document: dict[str, Any]) -> None:
    """Found by schemathesis: a widget's `order` out of 32 bits, or an empty `widget_type`,
    was valid for the document and a 400 from the service."""
    body = document["paths"]["/v2/account/dashboard"]["put"]["requestBody"]
    schema = body["content"]["application/json"]["schema"]
    if "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    widget = schema["properties"]["widgets"]["items"]["properties"]
    assert (widget["order"]["minimum"], widget["order"]["maximum"]) == (-(2**31), 2**31 - 1)
    assert widget["widget_type"]["pattern"] == "\\S" and widget["widget_title"]["maxLength"]


def _schemas(node: Any) -> list[dict[str, Any]]:
    """Every schema object in the document (and whatever else is a JSON object in it)."""
    if isinstance(node, list):
        return [found for item in node for found in _schemas(item)]
    if not isinstance(node, dict):
        return []
    return [node, *(found for value in node.values() for found in _schemas(value))]


@pytest.mark.parametrize("route", ROUTES, ids=_route_id)
def test_every_response_has_its_schema(route: Route, document: dict[str, Any]) -> None:
    operation = _operations(document)[(route.method, openapi.canonical(route.path))]
    models = document["components"]["schemas"]
    for code, response in operation["responses"].items():
        content = response.get("content", {})
        bodiless = not route.response_type and code in map(str, route.responses)
        if int(code) in openapi.NO_CONTENT or route.method == "HEAD" or code[0] == "3" or bodiless:
            assert not content, f"{_route_id(route)} {code} has no body"
            continue
        assert content, f"{_route_id(route)} {code}: no content documented"
        for media, body in content.items():
            schema = body["schema"]
            assert schema, f"{_route_id(route)} {code} {media}: empty schema"
            for ref in re.findall(r"#/components/schemas/(\w+)", str(schema)):
                assert ref in models, f"{_route_id(route)} {code}: {ref} is not a model"
    assert set(operation["responses"]) >= {"500", "503"}
    if route.auth != "public":
        assert {"401", "403"} <= set(operation["responses"])
    if route.method not in ("GET", "HEAD"):
        assert "507" in operation["responses"]


def test_models_are_valid_json_schemas(document: dict[str, Any]) -> None:
    invalid = {}
    for name, schema in document["components"]["schemas"].items():
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            invalid[name] = exc.message
    assert invalid == {}


def test_operation_ids_are_unique(document: dict[str, Any]) -> None:
    ids = [operation["operationId"] for operation in _operations(document).values()]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", i) for i in ids), ids


def _sdk_operations() -> list[tuple[str, str, str, str]]:
    """(module, function, method, path) of every operation of the installed SDK."""
    found = []
    root = resources.files("cyphermed") / "api"
    for module in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "__pycache__"):
        for source in sorted(module.iterdir()):
            if not source.name.endswith(".py") or source.name == "__init__.py":
                continue
            text = source.read_text("utf-8")
            method = re.search(r'"method": "(\w+)"', text)
            url = re.search(r'"url": f?"([^"]+)"', text)
            assert method and url, source.name
            found.append((module.name, source.name[:-3], method.group(1).upper(), url.group(1)))
    return found


SDK_OPERATIONS = _sdk_operations()
# The SDK names operations this server does not offer: verifying the account's phone number
# by SMS (the interface removed them in 2.2.39).
NOT_SERVED = {"send_sms_verification_code", "verify_account_sms"}


def test_every_sdk_operation_is_documented_under_its_name(document: dict[str, Any]) -> None:
    """Each at the SDK's own method and path: no path stands in for another (a role's
    holdings were once answered, and documented, only as `/access/{account_id}`)."""
    operations = _operations(document)
    wrong = []
    for module, function, method, path in SDK_OPERATIONS:
        if function in NOT_SERVED:
            continue
        operation = operations.get((method, path))
        if operation is None:
            wrong.append(f"{module}.{function}: {method} {path} is not documented")
            continue
        named = operation["operationId"] == function
        if not named and f"`{function}`" not in operation.get("description", ""):
            wrong.append(f"{module}.{function}: documented as {operation['operationId']}")
        if module not in operation["tags"] and not (module == "well_known" and not named):
            wrong.append(f"{module}.{function}: tagged {operation['tags']}")
    assert not wrong, "\n".join(wrong)
    assert len(SDK_OPERATIONS) > 100  # the SDK was found


# Operations of the interface that the SDK has no function for: the staff-only
# organizations and billing points, other users' pictures, the changelog and reference,
# presigned URLs, and the signing keys at the root (the SDK's `well_known.get_jwks`).
INTERFACE_BEYOND_SDK = {
    *("create_org", "get_orgs", "get_org_by_id", "patch_org", "delete_org_by_id"),
    *("create_billing_point", "get_billing_points", "get_billing_point_by_id"),
    *("patch_billing_point", "delete_billing_point_by_id", "get_billing_balance"),
    *("get_billing_rates", "patch_billing_rates", "get_billing_usage"),
    *("set_user_picture", "delete_user_picture", "get_changelog", "get_docs"),
    *("upload_presigned", "download_presigned", "get_well_known_jwks"),
}


def test_operations_beyond_the_interface_are_tagged_extensions(
    document: dict[str, Any],
) -> None:
    """Everything that is neither the SDK's nor the interface's is edge's own, and its
    second tag says so (DESIGN: extensions are tagged); nothing else is. A HEAD goes with
    its GET."""
    operations = _operations(document)
    interface = {function for _, function, _, _ in SDK_OPERATIONS} | INTERFACE_BEYOND_SDK
    wrong = []
    for (method, path), operation in operations.items():
        named = operations.get(("GET", path), operation) if method == "HEAD" else operation
        own = named["operationId"] not in interface
        if own != (operation["tags"][1:] == ["extensions"]):
            wrong.append(f"{method} {path}: {operation['tags']}")
    assert not wrong, "\n".join(wrong)
    assert {"name": "extensions"}.items() <= document["tags"][-1].items()


async def test_the_suite_catches_a_response_that_breaks_the_document(
    app: web.Application, aiohttp_client: Any
) -> None:
    """tests/documented.py, on a document made stricter than the server: a body missing a
    required field and an undocumented status are both caught."""
    strict = Documented()
    version = strict.document["paths"]["/v2/version"]["get"]["responses"]["200"]
    version["content"]["application/json"]["schema"] = {"required": ["not_sent"]}
    del strict.document["paths"]["/v2/orgs/{org_id}"]["get"]["responses"]["401"]

    async def check(request: web.Request, response: web.StreamResponse) -> None:
        strict.check(request, response)

    app.on_response_prepare.append(check)
    client = await aiohttp_client(app)
    assert (await client.get("/v2/version")).status == 200
    assert (await client.get("/v2/orgs/AAAAAAAAAAAAAAAA")).status == 401
    assert len(strict.problems) == 2, strict.problems
    assert "GET /v2/version -> 200: body: 'not_sent' is a required property" in strict.problems
    assert "GET /v2/orgs/{org_id} -> 401: status 401 is not documented" in strict.problems


def test_the_tunnel_connect_refusal_documents_the_services_it_carries(
    document: dict[str, Any],
) -> None:
    """Its 400 carries `services` beside the Status message (edge tunnel connect reads
    them): the document names a model that lists it (tests/documented.py checks every
    error body against its model's fields), beside the Status every path ID's 400 is."""
    connect = document["paths"]["/v2/tunnels/{tunnel_id}/connect"]["get"]["responses"]
    schema = connect["400"]["content"]["application/json"]["schema"]
    refs = [each["$ref"].rsplit("/", 1)[-1] for each in schema["anyOf"]]
    assert refs == ["ServiceRefused", "Status"]
    model = document["components"]["schemas"][refs[0]]
    assert set(model["required"]) == {"message", "services"}
    assert model["properties"]["services"] == {"type": "array", "items": {"type": "string"}}


EST_POSTS = ["/.well-known/est/simpleenroll", "/.well-known/est/simplereenroll"]


@pytest.mark.parametrize("path", EST_POSTS)
def test_est_posts_list_the_body_refusals(document: dict[str, Any], path: str) -> None:
    """EST reads its body itself (base64 DER, not JSON): too large is a 413, too slow a
    408, as for every body, and the document says so."""
    responses = _operations(document)[("POST", path)]["responses"]
    assert {"400", "408", "413"} <= set(responses)
