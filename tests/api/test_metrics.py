"""GET /metrics: who may scrape it, and that its figures follow what the site does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from edge.app import create_app
from edge.kernel.config import ConfigError
from tests.conftest import Api, make_config
from tests.factory import new_site
from tests.world import CALLERS, World, table

METRICS_TOKEN = "scraper-token-0123456789abcdef"


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape by (name, labels), parsed by the client library."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(scrape: dict[Any, float], name: str, **labels: str) -> float:
    return scrape.get((name, frozenset(labels.items())), 0.0)


async def scrape(api: Api, token: str | None) -> dict[Any, float]:
    status, text = await api.call("GET", "/metrics", token)
    assert status == 200, text
    return samples(text)


async def test_figures_change_with_activity(world: World) -> None:
    assert world.api is not None
    staff = await world.token("staff_unscoped")
    before = await scrape(world.api, staff)
    group = f"/v2/groups/{world.org_group_id}"
    for _ in range(3):
        assert (await world.call("org_admin", "GET", group))[0] == 200
    assert (await world.call("plain", "GET", group))[0] == 404  # not visible to them
    wrong = {"grant_type": "password", "username": "admin", "password": "not-the-password"}
    assert (await world.api.call("POST", "/v2/auth/token", data=wrong))[0] == 400
    assert (await world.call("org_admin", "POST", "/v2/groups", json={"name": "Ops"}))[0] == 201
    after = await scrape(world.api, staff)

    route = {"method": "GET", "route": "/v2/groups/{group_id}"}
    for status, more in (("200", 3), ("404", 1)):
        name = "edge_http_requests_total"
        assert (
            value(after, name, **route, status=status) - value(before, name, **route, status=status)
            == more
        )
        count = "edge_http_request_duration_seconds_count"
        assert value(after, count, **route, status=status) == value(
            after, name, **route, status=status
        )
    inf = value(
        after, "edge_http_request_duration_seconds_bucket", **route, status="200", le="+Inf"
    )
    assert inf == value(after, "edge_http_requests_total", **route, status="200")
    assert not any(world.org_group_id in str(labels) for _, labels in after)  # templates only
    assert value(after, "edge_sign_in_failures_total", factor="password") == 1 + value(
        before, "edge_sign_in_failures_total", factor="password"
    )
    commits = "edge_db_commit_duration_seconds_count"
    assert value(after, commits) > value(before, commits)
    assert value(after, "edge_db_size_bytes", file="database") > 0
    assert (value(after, "edge_db_writer_queue_depth"), value(after, "edge_tunnel_streams")) == (
        0,
        0,
    )
    assert ("edge_blob_store_bytes", frozenset()) in after
    assert ("edge_outbox_messages", frozenset({("status", "pending")})) in after
    assert value(after, "process_resident_memory_bytes") > 0


async def test_an_unmatched_path_is_counted_without_it(world: World) -> None:
    assert world.api is not None
    assert (await world.api.call("GET", "/v2/no-such-thing/secret-looking"))[0] == 404
    after = await scrape(world.api, await world.token("staff_unscoped"))
    assert value(after, "edge_http_requests_total", method="GET", route="unmatched", status="404")
    assert not any("secret-looking" in str(labels) for _, labels in after)


SCRAPES = {
    "staff": 200,
    "staff_unscoped": 200,
    "anonymous": 401,
    "org_admin": 403,
    "other_admin": 403,
    "plain": 403,
    "device_boss": 403,
    "device_plain": 403,
}


@pytest.mark.parametrize(
    ("who", "expected"),
    table(SCRAPES, not_applicable=tuple(w for w in CALLERS if w not in SCRAPES)),
)
async def test_who_may_scrape(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "GET", "/metrics")
    assert status == expected
    if expected != 200:
        assert set(body) == {"message"}


async def test_the_metrics_token(aiohttp_client: Any, data_dir: Path) -> None:
    site = new_site(data_dir, metrics_token=METRICS_TOKEN)
    api = Api(await aiohttp_client(create_app(site)))
    assert (await api.call("GET", "/metrics", METRICS_TOKEN))[0] == 200
    for wrong in (METRICS_TOKEN[:-1] + "X", "edk_" + "a" * 40, "a.b.c"):
        status, body = await api.call("GET", "/metrics", wrong)
        assert (status, set(body)) == (401, {"message"})


async def test_metrics_off(aiohttp_client: Any, data_dir: Path) -> None:
    site = new_site(data_dir, metrics="false")
    api = Api(await aiohttp_client(create_app(site)))
    status, body = await api.call("GET", "/metrics", await api.token())
    assert (status, set(body)) == (404, {"message"})


async def test_two_applications_keep_their_own_figures(
    aiohttp_client: Any, data_dir: Path, tmp_path: Path
) -> None:
    first = Api(await aiohttp_client(create_app(new_site(data_dir))))
    second = Api(await aiohttp_client(create_app(new_site(tmp_path / "two"))))
    for _ in range(2):
        await first.call("GET", "/v2/version")
    scraped = [await scrape(api, await api.token()) for api in (first, second)]
    version = {"method": "GET", "route": "/v2/version", "status": "200"}
    assert [value(s, "edge_http_requests_total", **version) for s in scraped] == [2, 0]


@pytest.mark.parametrize("token", ["short", "has a space in it, long enough"])
def test_a_weak_metrics_token_is_a_bad_setting(tmp_path: Path, token: str) -> None:
    with pytest.raises(ConfigError, match="invalid setting metrics_token"):
        make_config(tmp_path, metrics_token=token)
