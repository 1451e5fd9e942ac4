"""Every response the test suite sees must be one the OpenAPI document promises.

A pytest plugin (tests/conftest.py lists it): every application the suite builds
(`edge.app.create_app` registers its routes through `api.routing.register`, which this
plugin wraps) checks each response before it is sent: its status must be documented for
its operation, and a JSON body must validate against the documented schema. A mismatch
fails the test that caused it, whichever client made the request (the aiohttp test
client, the SDK, raw sockets). Validators are compiled once per operation and status.
Responses to no operation (an unknown path, a wrong method) are the router's, not an
operation's, and are not checked here (tests/api/test_conventions.py covers them).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from aiohttp import web
from jsonschema import Draft202012Validator, FormatChecker

from api import openapi, routing
from edge.app import ROUTES

_DATE_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
_DATE = re.compile(r"\d{4}-\d\d-\d\d")
FORMATS = FormatChecker(formats=())
FORMATS.checks("date-time")(
    lambda value: not isinstance(value, str) or bool(_DATE_TIME.fullmatch(value))
)
FORMATS.checks("date")(lambda value: not isinstance(value, str) or bool(_DATE.fullmatch(value)))


class Documented:
    """The document, and a validator per (method, path, status), made when first needed."""

    def __init__(self) -> None:
        self.document = copy.deepcopy(openapi.build(ROUTES, "/"))  # a test may change its own
        self.components = self.document["components"]
        self._validators: dict[tuple[str, str, str], Draft202012Validator | None] = {}
        self.problems: list[str] = []

    def check(self, request: web.Request, response: web.StreamResponse) -> None:
        info = request.match_info
        if info.http_exception is not None or info.route.resource is None:
            return  # no operation: an unknown path or a wrong method
        if info.route.handler.__module__.startswith("tests."):
            return  # a route a test added to the application (one that fails on purpose)
        method, path = request.method, info.route.resource.canonical
        where = f"{method} {path} -> {response.status}"
        operation = self._operation(method, path)
        if operation is None:
            self.problems.append(f"{where}: the operation is not in the OpenAPI document")
            return
        status = str(response.status)
        if status not in operation["responses"]:
            self.problems.append(f"{where}: status {status} is not documented")
            return
        documented = operation["responses"][status].get("content", {})
        if response.content_type == "application/json" and documented:
            self._check_body(where, (method, path, status), documented, response)
        elif documented and not _media_ok(response.content_type, documented) and method != "HEAD":
            kinds = ", ".join(documented)
            self.problems.append(f"{where}: {response.content_type} (documented: {kinds})")

    def _operation(self, method: str, path: str) -> dict[str, Any] | None:
        """The documented operation; a HEAD the document does not list is its GET's (every
        GET answers HEAD: api/routing.py's `with_heads`)."""
        operations = self.document["paths"].get(path, {})
        found = operations.get(method.lower())
        if found is None and method == "HEAD":
            return operations.get("get")
        return found

    def _check_body(
        self,
        where: str,
        key: tuple[str, str, str],
        documented: dict[str, Any],
        response: web.StreamResponse,
    ) -> None:
        if "application/json" not in documented:
            self.problems.append(f"{where}: JSON, but documented as {', '.join(documented)}")
            return
        body = getattr(response, "body", None)
        if not isinstance(body, bytes) or not body:
            return  # a streamed body: its status and type were checked
        schema, parsed = documented["application/json"]["schema"], json.loads(body)
        validator = self._validator(key, schema)
        error = next(iter(validator.iter_errors(parsed)), None)
        if error is not None:
            at = "/".join(str(p) for p in error.absolute_path) or "body"
            self.problems.append(f"{where}: {at}: {error.message[:300]}")
        elif response.status >= 400 and isinstance(parsed, dict):
            self._no_undocumented_fields(where, schema, parsed)

    def _no_undocumented_fields(self, where: str, schema: Any, body: dict[str, Any]) -> None:
        """An error body holds only what its model lists: models stay open to fields added
        later, so the schema alone would let a refusal's extra field (a tunnel's
        `services`) go undocumented."""
        either = schema.get("anyOf", [schema]) if isinstance(schema, dict) else [schema]
        listed = {name for each in either for name in self._properties(each)}
        extra = sorted(set(body) - listed)
        if extra:
            self.problems.append(f"{where}: {', '.join(extra)}: not in the documented model")

    def _properties(self, schema: Any) -> dict[str, Any]:
        """The fields a model (or a schema that names one) lists."""
        ref = schema.get("$ref", "") if isinstance(schema, dict) else ""
        model = self.components["schemas"].get(ref.rsplit("/", 1)[-1], schema)
        return model.get("properties", {}) if isinstance(model, dict) else {}

    def _validator(self, key: tuple[str, str, str], schema: dict[str, Any]) -> Draft202012Validator:
        found = self._validators.get(key)
        if found is None:
            # The components travel with the schema, so `#/components/...` resolves.
            found = Draft202012Validator(
                {**schema, "components": self.components}, format_checker=FORMATS
            )
            self._validators[key] = found
        return found


def _media_ok(content_type: str, documented: dict[str, Any]) -> bool:
    return content_type in documented or "*/*" in documented


DOCUMENTED = Documented()
_register = routing.register


def _register_checked(app: web.Application, routes: Sequence[routing.Route]) -> None:
    _register(app, routes)
    app.on_response_prepare.append(_on_prepare)


async def _on_prepare(request: web.Request, response: web.StreamResponse) -> None:
    DOCUMENTED.check(request, response)


@pytest.fixture(autouse=True, scope="session")
def _documented_apps() -> Iterator[None]:
    routing.register = _register_checked
    yield
    routing.register = _register


@pytest.fixture(autouse=True)
def responses_as_documented() -> Iterator[Callable[[], list[str]]]:
    """Fails the test when a response it caused is not the documented one."""
    DOCUMENTED.problems.clear()
    yield lambda: list(DOCUMENTED.problems)
    problems, DOCUMENTED.problems[:] = list(DOCUMENTED.problems), []
    if problems:
        pytest.fail("Responses that break the OpenAPI document:\n" + "\n".join(problems[:20]))
