"""HEAD on every GET route (RFC 9110, 9.3.2): the status and headers the GET would have,
and no body. Sweeps the router, so a new GET route is checked without a new test. A
WebSocket upgrade is the exception: only a GET can upgrade (RFC 6455), so HEAD is a 405
that names GET; so is a GET that issues something each time (a device's bundle)."""

from __future__ import annotations

from typing import Any

import pytest

from api.routing import Route
from edge.app import ROUTES
from tests import wire
from tests.api.test_conventions import concrete
from tests.conftest import Api

UPGRADES = [r for r in ROUTES if r.method == "GET" and 101 in r.responses]
# GETs that issue something each time (a device's bundle): a HEAD would too, so none.
UNSAFE = [r for r in ROUTES if r.method == "GET" and not r.head]
GETS = [r for r in ROUTES if r.method == "GET" and r not in UPGRADES + UNSAFE]
# Headers that differ between two answers to the same request (and the length, below).
PER_ANSWER = {"Date", "X-Request-ID", "Content-Length"}


def _route_id(route: Route) -> str:
    return route.path


def _framing(headers: Any) -> dict[str, str]:
    return {name: value for name, value in headers.items() if name not in PER_ANSWER}


@pytest.mark.parametrize("route", GETS, ids=_route_id)
async def test_head_answers_as_get_would_without_a_body(api: Api, route: Route) -> None:
    """Without a token (a protected route's 401, a public one's answer), on the route's
    path with made-up IDs."""
    path = concrete(route.path)
    got = await api.client.get(path, allow_redirects=False)
    await got.read()
    head = await api.client.head(path, allow_redirects=False)
    assert head.status == got.status, f"HEAD {path}"
    assert _framing(head.headers) == _framing(got.headers)
    # RFC 9110, 8.6: a HEAD may leave Content-Length out (aiohttp does for an empty body)
    length = head.headers.get("Content-Length", got.headers.get("Content-Length"))
    assert length == got.headers.get("Content-Length")
    assert await head.read() == b""


async def test_a_signed_in_head_has_the_gets_length(api: Api, staff_token: str) -> None:
    headers = {"Authorization": f"Bearer {staff_token}"}
    await api.create_org(staff_token, name="Clinic", alias="clinic")
    got = await api.client.get("/v2/orgs", headers=headers)
    body = await got.read()
    head = await api.client.head("/v2/orgs", headers=headers)
    assert (got.status, head.status) == (200, 200)
    assert head.headers["Content-Length"] == str(len(body)) == got.headers["Content-Length"]
    assert head.headers["Content-Type"] == "application/json; charset=utf-8"


async def test_no_body_follows_a_head_on_the_wire(api: Api) -> None:
    """A body after a HEAD's headers would be read as the start of the next answer on the
    same connection."""
    reply = await wire.reply(
        api,
        b"HEAD /v2/version HTTP/1.1\r\nHost: edge\r\n\r\n"
        b"GET /v2/version HTTP/1.1\r\nHost: edge\r\nConnection: close\r\n\r\n",
    )
    first, _, rest = reply.partition(b"\r\n\r\n")
    assert first.startswith(b"HTTP/1.1 200 ") and b"Content-Length: " in first
    assert rest.startswith(b"HTTP/1.1 200 "), rest[:80]
    assert rest.endswith(b'"}')


@pytest.mark.parametrize("route", UNSAFE, ids=_route_id)
async def test_a_get_that_issues_credentials_refuses_head(api: Api, route: Route) -> None:
    answer = await api.client.head(concrete(route.path))
    assert answer.status == 405
    assert "GET" in answer.headers["Allow"] and "HEAD" not in answer.headers["Allow"]


@pytest.mark.parametrize("route", UPGRADES, ids=_route_id)
async def test_a_websocket_upgrade_refuses_head(api: Api, route: Route) -> None:
    answer = await api.client.head(concrete(route.path))
    assert answer.status == 405
    assert "GET" in answer.headers["Allow"] and "HEAD" not in answer.headers["Allow"]
