"""`api.routing.register` prepares a route table's guarded handlers once a process and every
application built from it shares them (the suite builds thousands); a table whose routes
change is prepared again, so no application is served an old table."""

from __future__ import annotations

from aiohttp import web

from api import routing
from api.routing import Route
from edge.app import ROUTES


async def _ok(request: web.Request) -> web.Response:
    return web.json_response({"message": "ok"})


async def _other(request: web.Request) -> web.Response:
    return web.json_response({"message": "other"})


def _table(app: web.Application) -> dict[tuple[str, str], object]:
    return {
        (route.method, route.resource.canonical): route.handler
        for route in app.router.routes()
        if route.resource is not None
    }


def _route(path: str, handler: routing.Handler) -> Route:
    return Route("GET", path, handler, "session", "A test's own route", "tests")


def test_two_applications_of_one_table_answer_alike() -> None:
    first, second = web.Application(), web.Application()
    routing.register(first, ROUTES)
    routing.register(second, ROUTES)
    assert _table(first) == _table(second)
    assert len(_table(first)) >= len(ROUTES)  # each GET with its HEAD


def test_a_table_whose_routes_changed_is_prepared_again() -> None:
    routes = [_route("/t/one", _ok)]
    before = web.Application()
    routing.register(before, routes)
    routes.append(_route("/t/two", _other))
    routes[0] = _route("/t/one", _other)
    after = web.Application()
    routing.register(after, routes)
    assert sorted(_table(before)) == [("GET", "/t/one"), ("HEAD", "/t/one")]
    assert sorted(_table(after)) == [
        ("GET", "/t/one"),
        ("GET", "/t/two"),
        ("HEAD", "/t/one"),
        ("HEAD", "/t/two"),
    ]
    assert _table(after)[("GET", "/t/one")] is not _table(before)[("GET", "/t/one")]
