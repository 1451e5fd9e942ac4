"""Property tests (hypothesis): PUT then GET returns the same value for arbitrary JSON at
arbitrary valid paths; paging with any `limit` and `path_filter` returns every match
exactly once, across the scan cap. Each runs a few examples in `make test` and many more in
`make test-long` (tests/properties.py).

Hypothesis drives plain (synchronous) tests, so the server runs on a loop of its own in a
thread, started once for the module; each example is a real HTTP request.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
import pytest
import regex
from aiohttp import web
from hypothesis import strategies as st

from edge.app import Site, create_app
from edge.auth.tokens import Lifetimes
from edge.data.signing import DataSigner
from edge.kernel import clock
from edge.kernel.principal import Principal
from storage import data as store
from storage.data import INDEX_FIELDS, DataEntry
from tests.factory import new_site
from tests.properties import everyday_and_long
from tests.tenants import new_tenant

T = TypeVar("T")
SEEDED = 12_000  # more than the scan cap, so paging crosses it


@dataclass
class Live:
    url: str
    token: str
    free_group: str  # PUT/GET examples write here
    paged_group: str  # SEEDED entries /k/00000 ..


class Loop:
    """An event loop on its own thread, for the server."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=120)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


def seed_paths(site: Site, group_id: str, who: str) -> None:
    signer = DataSigner.load_or_create(site.services.config.data_dir)
    now = clock.now_iso()

    def entry(path: str) -> DataEntry:
        blank = dict.fromkeys(INDEX_FIELDS)
        made = DataEntry(
            group_id,
            path,
            {"at": path},
            **blank,
            created_by=who,
            created_date=now,
            last_updated_by=who,
            last_updated_date=now,
            updated_by_list=[who],
            updated_date_list=[now],
            revision=1,
            signature="",
        )
        return replace(made, signature=signer.sign(made))

    site.services.db.write_sync(
        lambda c: [store.save(c, entry(f"/k/{i:05d}")) for i in range(SEEDED)] and None
    )


async def arrange(site: Site) -> tuple[web.AppRunner, Live]:
    tenant = await new_tenant(site, None)  # type: ignore[arg-type]
    admin = Principal("user", tenant.admin_id, None, tenant.org_id)
    groups = [
        await site.services.groups.create(admin, {"name": n, "create_own_access": False})
        for n in ("free", "paged")
    ]
    lifetimes = Lifetimes(access=timedelta(hours=2), refresh=timedelta(hours=2))
    info = await site.services.tokens.open_session(
        "user", tenant.admin_id, org_id=tenant.org_id, project_id=None, lifetimes=lifetimes
    )
    runner = web.AppRunner(create_app(site))
    await runner.setup()
    server = web.TCPSite(runner, "127.0.0.1", 0)
    await server.start()
    port = runner.addresses[0][1]
    live = Live(f"http://127.0.0.1:{port}", str(info["access_token"]), *groups)
    return runner, live


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, template_dir: Path) -> Iterator[Live]:
    folder = tmp_path_factory.mktemp("properties") / "data"
    shutil.copytree(template_dir, folder)
    site = new_site(folder)
    loop = Loop()
    runner, found = loop.run(arrange(site))
    seed_paths(site, found.paged_group, "seeder0000000000")
    try:
        yield found
    finally:
        loop.run(runner.cleanup())
        loop.stop()
        site.services.db.close()


@pytest.fixture(scope="module")
def http(live: Live) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {live.token}"}
    with httpx.Client(base_url=live.url, headers=headers, timeout=60) as client:
        yield client


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=16,
)
SEGMENT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/"),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", ".."))
PATHS = st.lists(SEGMENT, min_size=1, max_size=5)


def url(group_id: str, segments: list[str]) -> str:
    return f"/v2/groups/{group_id}/data/" + "/".join(quote(s, safe="") for s in segments)


def put_then_get_returns_the_same_value(
    http: httpx.Client, live: Live, value: Any, segments: list[str]
) -> None:
    target = url(live.free_group, segments)
    put = http.put(
        target, content=json.dumps({"value": value}), headers={"Content-Type": "application/json"}
    )
    assert put.status_code == 200, put.text
    got = http.get(target)
    assert got.status_code == 200, got.text
    entry = got.json()["data"]
    assert entry["value"] == value
    assert entry["path"] == "/" + "/".join(segments)


test_put_then_get_returns_the_same_value, test_put_then_get_long = everyday_and_long(
    60, 1500, value=JSON, segments=PATHS
)(put_then_get_returns_the_same_value)


PATTERNS = [r"999$", r"^/k/0000", r"(012|345)6$", r"^/k/1[01]9", r"/k/(?!0).*55$", r"nomatch"]
ALL_PATHS = [f"/k/{i:05d}" for i in range(SEEDED)]


def paging_with_any_limit_and_path_filter_returns_every_match_once(
    http: httpx.Client, live: Live, limit: int, pattern: str, desc: bool
) -> None:
    seen: list[str] = []
    key: dict[str, Any] | None = None
    target = f"/v2/groups/{live.paged_group}/data/k"
    for _ in range(SEEDED):
        params: dict[str, Any] = {
            "cascade": "true",
            "paths_only": "true",
            "limit": limit,
            "path_filter": pattern,
            "desc": str(desc).lower(),
        }
        if key is not None:
            params["last_evaluated_key"] = json.dumps(key)
        page = http.get(target, params=params)
        assert page.status_code == 200, page.text
        body = page.json()
        assert len(body["paths"]) <= limit
        seen += body["paths"]
        key = body.get("last_evaluated_key")
        if key is None:
            break
    expected = [p for p in ALL_PATHS if regex.search(pattern, p)]
    assert seen == (expected[::-1] if desc else expected)


(
    test_paging_with_any_limit_and_path_filter_returns_every_match_once,
    test_paging_with_any_limit_and_path_filter_long,
) = everyday_and_long(
    20,
    150,
    limit=st.integers(min_value=1, max_value=1000),
    pattern=st.sampled_from(PATTERNS),
    desc=st.booleans(),
)(paging_with_any_limit_and_path_filter_returns_every_match_once)
