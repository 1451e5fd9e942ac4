"""The ways in (api/entry.py): `GET /` leads to the console, `GET /v2` lists the
interface's entry points, and every link it gives answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edge.app import create_app
from tests.conftest import Api
from tests.factory import new_site


async def test_the_root_leads_to_the_console(api: Api) -> None:
    answer = await api.client.get("/", allow_redirects=False)
    assert answer.status == 302
    assert answer.headers["Location"] == "/console/"
    assert answer.headers["Cache-Control"] == "no-store"
    followed = await api.client.get("/")
    assert followed.status == 200 and followed.content_type == "text/html"
    assert '<script type="module" src="/console/js/main.js">' in await followed.text()


async def test_the_interface_lists_its_entry_points(api: Api) -> None:
    status, body = await api.call("GET", "/v2")
    assert status == 200
    assert body["name"] == "edge"
    _, version = await api.call("GET", "/v2/version")
    assert body["version"] == version["version"]
    assert body["server_version"] == version["server_version"]
    base = str(api.client.make_url("")).rstrip("/")
    links = body["links"]
    assert links["openapi"] == f"{base}/v2/openapi.json"
    assert links["token"] == f"{base}/v2/auth/token"
    assert {"docs", "health", "jwks", "changelog", "security_txt"} <= set(links)


async def test_every_entry_point_answers(api: Api) -> None:
    """Each link is a route: a GET answers 200, and the sign-in link takes a POST (a form
    without its fields is a 400, not a 404 or 405)."""
    _, body = await api.call("GET", "/v2")
    base = str(api.client.make_url(""))
    for name, url in body["links"].items():
        path = url.removeprefix(base.rstrip("/"))
        method = "POST" if name == "token" else "GET"
        answer = await api.client.request(method, path)
        assert answer.status == (400 if name == "token" else 200), (name, url)


async def test_the_entry_points_name_the_public_url(aiohttp_client: Any, tmp_path: Path) -> None:
    site = new_site(tmp_path / "site", public_url="https://edge.plant.example")
    api = Api(await aiohttp_client(create_app(site)))
    _, body = await api.call("GET", "/v2")
    assert body["links"]["docs"] == "https://edge.plant.example/v2/docs"
    assert body["links"]["jwks"] == "https://edge.plant.example/.well-known/jwks.json"
