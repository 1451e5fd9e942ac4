"""What every test shares: the settings of a test server, the HTTP helper `Api`, a cheap
password hash and a real clock. The fixtures that build sites, servers, orgs and worlds
are in the one factory, tests/factory.py."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from argon2 import PasswordHasher

from edge.auth import hashing
from edge.kernel import clock
from edge.kernel.config import BY_NAME, Config, load

# The one factory of sites, servers, orgs and worlds (tests/factory.py); every response
# checked against the OpenAPI document (tests/documented.py).
pytest_plugins = ("tests.factory", "tests.documented")

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
    """A config on `data_dir` with these settings. A name that is no setting fails here:
    `load` skips the flags it does not know (argparse's extras), and a test that set a
    mistyped or not yet declared setting ran with the default, unseen."""
    unknown = sorted(set(overrides) - set(BY_NAME))
    assert not unknown, f"no such setting: {unknown}"
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
