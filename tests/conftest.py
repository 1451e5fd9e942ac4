"""Shared fixtures: a migrated template data folder built once from code, copied per test.

Every test gets its own data folder, database and app; nothing mutable is shared. A test
that asks for `world` (tests/world.py) starts from a copy of the world's folder instead.
"""

from __future__ import annotations

import gc
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from argon2 import PasswordHasher

from edge.app import Site, create_app, open_site
from edge.auth import hashing
from edge.kernel import clock
from edge.kernel.config import Config, load

# `world`, `content_world` and their templates (tests/world.py); every response checked
# against the OpenAPI document (tests/documented.py).
pytest_plugins = ("tests.world", "tests.documented")

# Argon2id at edge's cost (64 MiB, 3 passes, 4 lanes) is about 0.2 s of CPU a hash, slow on
# purpose; the suite hashes and checks passwords thousands of times (every sign-in, every
# new org admin), and the pool that does it runs below the loop's priority, so under a
# busy machine or two xdist workers a sign-in took seconds. The tests check what edge does
# with a password, not Argon2's cost: in this process the same algorithm runs at its
# smallest cost. `edge serve` started by a test, and tests/edge/auth/test_hashing.py's
# check of the real parameters (in a fresh interpreter), keep edge's.
hashing.use(PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))

STAFF_PASSWORD = "staff-password-for-tests"
STAFF_EMAIL = "ops@example.test"


# The MQTT listeners are off unless a test turns them on (tests/embedded_broker/): tests
# run side by side and must not all claim 1883.
NO_MQTT = {"mqtt_port": 0, "mqtt_tls_port": 0, "mqtt_ws_port": 0, "mqtt_wss_port": 0}


def make_config(data_dir: Path, **overrides: Any) -> Config:
    env = {"EDGE_ADMIN_PASSWORD": STAFF_PASSWORD, "EDGE_ADMIN_EMAIL": STAFF_EMAIL}
    given = {**NO_MQTT, **overrides}
    flags = {"data_dir": str(data_dir), **{k: str(v) for k, v in given.items()}}
    return load(flags, env)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Collect garbage less often: each test builds a site and an app, thousands of objects,
    and Python's collector, run every 700 new ones, went through them again and again (a
    tenth of the suite's time). It now runs every 50,000, and what collection made, which
    lives for the whole run, is frozen out of every later pass. A worker's peak memory
    stayed the same (about 390 MB over test_devices and test_users)."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 10)


@pytest.fixture(scope="session")
def template_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder prepared once: keys, migrated database, first staff account."""
    folder = tmp_path_factory.mktemp("template") / "data"
    site = open_site(make_config(folder))
    site.services.db.close()
    return folder


@pytest.fixture
def data_dir(template_dir: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A fresh copy of the template, or of the world's folder for a test that uses it (of
    the world with its files part, for a test that uses `content_world`)."""
    source = template_dir
    if "content_world_template" in request.fixturenames:  # `content_world` needs it
        source = request.getfixturevalue("content_world_template").folder
    elif "world_template" in request.fixturenames:  # the `world` fixture needs it
        source = request.getfixturevalue("world_template").folder
    target = tmp_path / "data"
    shutil.copytree(source, target)
    return target


@pytest.fixture
def config(data_dir: Path) -> Config:
    return make_config(data_dir)


@pytest.fixture
def site(config: Config) -> Iterator[Site]:
    opened = open_site(config)
    yield opened
    opened.services.db.close()  # idempotent: the app's cleanup may have closed it already


@pytest.fixture
def app(site: Site) -> web.Application:
    return create_app(site)


@pytest.fixture
async def client(aiohttp_client: Any, app: web.Application) -> TestClient:  # type: ignore[type-arg]
    return await aiohttp_client(app)


@pytest.fixture(autouse=True)
def real_clock() -> Iterator[None]:
    clock.reset()
    yield
    clock.reset()


@dataclass
class Api:
    """A thin helper over the test client: sign in, call with a token, read JSON."""

    client: TestClient  # type: ignore[type-arg]

    async def token(
        self, username: str = "admin", password: str = STAFF_PASSWORD, **form: str
    ) -> str:
        response = await self.client.post(
            "/v2/auth/token",
            data={"grant_type": "password", "username": username, "password": password, **form},
        )
        body = await response.json()
        assert response.status == 201, body
        return str(body["access_token"])

    async def call(
        self, method: str, path: str, token: str | None = None, **kwargs: Any
    ) -> tuple[int, Any]:
        headers = dict(kwargs.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Bearer {token}"
        response = await self.client.request(method, path, headers=headers, **kwargs)
        if response.content_type == "application/json":
            return response.status, await response.json()
        return response.status, await response.text()

    async def create_org(self, token: str, **body: Any) -> str:
        status, reply = await self.call("POST", "/v2/orgs", token, json=body)
        assert status == 201, reply
        return str(reply["org"]["id"])


@pytest.fixture
def api(client: TestClient) -> Api:  # type: ignore[type-arg]
    return Api(client)


@pytest.fixture
async def staff_token(api: Api) -> str:
    return await api.token()
