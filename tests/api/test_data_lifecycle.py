"""A deleted group's data: kept (unreachable) while the group is in the trash, back with
a restore, erased when the trash entry is erased or purged, when the group is deleted
permanently, and with its organization (docs/lifecycle.md, docs/data.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from edge import clock
from edge.app import Site, _purge
from storage import data as store
from tests.api.data_world import DataWorld, data_world, seed
from tests.conftest import Api


@pytest.fixture
async def world(site: Site, api: Api) -> DataWorld:
    world = await data_world(site, api)
    await seed(world, [f"/e/{i}" for i in range(5)])
    return world


def stored(world: DataWorld, group_id: str = "") -> int:
    gid = group_id or world.group_id
    return world.site.services.db.read(lambda c: store.count_below(c, gid, "/", 10**6))


async def erase(world: DataWorld) -> int:
    return await world.site.services.data_eraser.erase_pending()


async def test_trash_keeps_the_data_and_restore_brings_it_back(world: DataWorld) -> None:
    token = await world.admin_token()
    assert (await world.api.call("DELETE", f"/v2/groups/{world.group_id}", token))[0] == 200
    assert (await world.call(token, "GET", "e/1"))[0] == 404  # the group is gone
    assert await erase(world) == 0 and stored(world) == 5
    status, _ = await world.api.call("POST", f"/v2/trash/{world.group_id}/restore", token)
    assert status == 200
    status, body = await world.call(token, "GET", "e/1")
    assert (status, body["data"]["value"]) == (200, {"p": "/e/1"})


async def test_erasing_the_trash_entry_erases_the_data(world: DataWorld) -> None:
    token = await world.admin_token()
    other = await world.new_group()
    await seed(world, ["/stays"], group_id=other)
    await world.api.call("DELETE", f"/v2/groups/{world.group_id}", token)
    assert (await world.api.call("DELETE", f"/v2/trash/{world.group_id}", token))[0] == 200
    assert await erase(world) == 5
    assert stored(world) == 0 and stored(world, other) == 1


async def test_the_retention_sweep_erases_the_data(world: DataWorld) -> None:
    token = await world.admin_token()
    await world.api.call("DELETE", f"/v2/groups/{world.group_id}", token)
    clock.advance(timedelta(days=31))
    await world.site.services.db.write(_purge)
    assert await erase(world) == 5 and stored(world) == 0


async def test_a_permanent_delete_erases_the_data(world: DataWorld) -> None:
    token = await world.admin_token()
    url = f"/v2/groups/{world.group_id}?permanent=true"
    assert (await world.api.call("DELETE", url, token))[0] == 200
    assert await erase(world) == 5 and stored(world) == 0


async def test_a_project_in_the_trash_keeps_its_groups_data(world: DataWorld) -> None:
    token = await world.admin_token()
    project = await world.site.services.projects.create(world.admin, {"name": "Line 2"})
    group = await world.new_group(project_id=project)
    await seed(world, ["/p/1", "/p/2"], group_id=group)
    assert (await world.api.call("DELETE", f"/v2/projects/{project}", token))[0] == 200
    assert await erase(world) == 0 and stored(world, group) == 2
    assert (await world.api.call("DELETE", f"/v2/trash/{project}", token))[0] == 200
    assert await erase(world) == 2 and stored(world, group) == 0


async def test_an_organization_deleted_takes_its_data(world: DataWorld, staff_token: str) -> None:
    url = f"/v2/orgs/{world.tenant.org_id}?force=true"
    assert (await world.api.call("DELETE", url, staff_token))[0] == 200
    assert await erase(world) == 5 and stored(world) == 0


async def test_large_erasures_go_in_batches(
    world: DataWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    from edge.data import eraser

    monkeypatch.setattr(eraser, "BATCH", 2)
    url = f"/v2/groups/{world.group_id}?permanent=true"
    await world.api.call("DELETE", url, await world.admin_token())
    assert await erase(world) == 5 and stored(world) == 0
