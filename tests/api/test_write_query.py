"""Every write (PUT, POST, PATCH, DELETE) refuses a query parameter its route does not
declare, or one given twice, with a 400 naming it, before it does anything; once the
caller is known (an anonymous caller is a 401 first)."""

from __future__ import annotations

import re

import pytest

from api.routing import WRITES, Route
from edge.app import ROUTES
from tests.conftest import Api

# A "session" route needs a sign-in challenge first; public ones check their own query
# (a presigned URL's is covered by its signature: tests/api/test_file_attacks.py).
CHECKED = [r for r in ROUTES if r.method in WRITES and r.auth not in ("session", "public")]


def concrete(path: str) -> str:
    """The route's path with a made-up value in each part: the check comes first."""
    return re.sub(r"\{[^}/]+(:[^}]*)?\}", "x1", path)


@pytest.mark.parametrize("route", CHECKED, ids=lambda r: f"{r.method} {r.path}")
async def test_an_undeclared_query_parameter_is_refused(
    api: Api, staff_token: str, route: Route
) -> None:
    status, body = await api.call(
        route.method, concrete(route.path), staff_token, params={"caskade": "true"}
    )
    assert (status, body) == (
        400,
        {"message": "caskade: is not a query parameter of this operation"},
    )


async def test_a_declared_parameter_given_twice_is_refused(api: Api, staff_token: str) -> None:
    path = "/v2/groups/x1/files/a.txt?cascade=true&cascade=false"
    status, body = await api.call("DELETE", path, staff_token)
    assert (status, body) == (400, {"message": "cascade: was given more than once"})


async def test_the_caller_is_known_before_the_query_is_read(api: Api) -> None:
    status, _ = await api.call("PATCH", "/v2/groups/x1", params={"caskade": "1"}, json={})
    assert status == 401


async def test_a_declared_parameter_passes(api: Api, staff_token: str) -> None:
    status, body = await api.call("DELETE", "/v2/orgs/x1", staff_token, params={"force": "true"})
    assert status == 404, body  # past the query check, to the org that is not there
