"""Bulk data requests: one method, many paths; writes all or nothing; a bulk GET answers
`data_by_path` and reports missing paths without failing (docs/data.md, "Bulk")."""

from __future__ import annotations

import pytest

from tests.data import seed
from tests.world import World


async def paths(world: World) -> list[str]:
    who = "org_admin"
    _, body = await world.data(who, "GET", "", params={"cascade": "", "paths_only": ""})
    return list(body["paths"])


async def test_bulk_post_creates_every_path_and_answers_201(world: World) -> None:
    who = "org_admin"
    body = {"method": "POST", "jobs": [{"paths": ["a", "b"], "value": {"n": 1}, "unicode_1": 7}]}
    assert await world.bulk_data(who, body) == (201, {"message": "Success"})
    _, got = await world.data(who, "GET", "b")
    assert got["data"]["value"] == {"n": 1} and got["data"]["unicode_1"] == "7"


async def test_bulk_post_is_all_or_nothing(world: World) -> None:
    who = "org_admin"
    await world.put_data(who, "taken", 1)
    jobs = [{"paths": ["fresh1", "fresh2"], "value": 2}, {"paths": ["taken"], "value": 3}]
    status, body = await world.bulk_data(who, {"method": "POST", "jobs": jobs})
    assert status == 409 and "/taken" in body["message"]
    assert await paths(world) == ["/taken"]


async def test_a_denied_path_undoes_the_whole_bulk_write(world: World) -> None:
    who = await world.data_holder("partial", {"/": {"can_write": True}, "/locked": {}})
    jobs = [{"paths": ["open/1", "open/2", "locked/1"], "value": 1}]
    status, body = await world.bulk_data(who, {"method": "PUT", "jobs": jobs})
    assert (status, body) == (403, {"message": "Not permitted to create data at /locked/1"})
    assert await paths(world) == []


async def test_bulk_patch_and_delete(world: World) -> None:
    who = "org_admin"
    await seed(world, ["/x/1", "/x/2", "/x/2/deep", "/y"])
    jobs = [{"paths": ["x/1", "y"], "value": {"patched": True}, "number_1": 4}]
    assert (await world.bulk_data(who, {"method": "PATCH", "jobs": jobs}))[0] == 200
    _, got = await world.data(who, "GET", "y")
    assert got["data"]["value"] == {"p": "/y", "patched": True} and got["data"]["revision"] == 2
    missing = {"method": "PATCH", "jobs": [{"paths": ["x/1", "nope"], "value": {}}]}
    assert (await world.bulk_data(who, missing))[0] == 404
    delete = {"method": "DELETE", "jobs": [{"paths": ["x/2"], "cascade": True}, {"paths": ["y"]}]}
    assert (await world.bulk_data(who, delete))[0] == 200
    assert await paths(world) == ["/x/1"]


async def test_bulk_get_answers_data_by_path_and_reports_missing_paths(world: World) -> None:
    who = "org_admin"
    await seed(world, ["/g/1", "/g/2", "/h/1", "/h/2"])
    jobs = [
        {"paths": ["g/1", "nothing"]},
        {"paths": ["h"], "cascade": True, "paths_only": True, "limit": 1},
    ]
    status, body = await world.bulk_data(who, {"method": "GET", "jobs": jobs})
    assert status == 200 and "results_by_path" not in body
    by_path = body["data_by_path"]
    assert by_path["/g/1"]["value"] == {"p": "/g/1"}
    assert "/nothing" not in by_path and body["missing_paths"] == ["/nothing"]
    assert by_path["/h"]["paths"] == ["/h/1"] and "last_evaluated_key" in by_path["/h"]
    jobs = [{"paths": ["h"], "cascade": True, "limit": 1}]
    _, body = await world.bulk_data(who, {"method": "GET", "jobs": jobs})
    assert [e["path"] for e in body["data_by_path"]["/h"]] == ["/h/1"]
    assert set(body["last_evaluated_key_by_path"]) == {"/h"}


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"method": "FETCH", "jobs": [{"paths": ["a"]}]}, 400, "method: must be one of"),
        ({"method": "PUT", "jobs": []}, 400, "jobs: must hold at least one job"),
        ({"method": "PUT", "jobs": [{"paths": ["a"]}]}, 406, "jobs.0.value: is required"),
        (
            {"method": "PUT", "jobs": [{"paths": ["a", "/a"], "value": 1}]},
            400,
            "jobs.0.paths: '/a' is named twice",
        ),
        (
            {"method": "GET", "jobs": [{"paths": ["a"], "bogus": 1}]},
            406,
            "jobs.0.bogus: is not a known field",
        ),
        ({"jobs": []}, 406, "method: is required"),
    ],
)
async def test_bulk_requests_that_are_refused(
    world: World, body: dict[str, object], status: int, message: str
) -> None:
    who = "org_admin"
    got_status, got = await world.bulk_data(who, body)
    assert got_status == status and got["message"].startswith(message), got


async def test_bulk_requests_name_a_bounded_number_of_paths(world: World) -> None:
    who = "org_admin"
    limit = world.site.services.config.data_max_bulk_paths
    jobs = [{"paths": [f"p/{i}" for i in range(limit + 1)], "value": 1}]
    status, body = await world.bulk_data(who, {"method": "PUT", "jobs": jobs})
    assert (status, body) == (400, {"message": f"jobs: may name at most {limit} paths in all"})
