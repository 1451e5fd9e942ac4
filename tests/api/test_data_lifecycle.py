"""A deleted group's data: kept (unreachable) while the group is in the trash, back with
a restore, erased when the trash entry is erased or purged, when the group is deleted
permanently, and with its organization (docs/lifecycle.md, docs/data.md). The group is
the world's Ward (tests/world.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from edge.app import _purge
from edge.kernel import clock
from storage import data as store
from tests.data import seed
from tests.world import World


@pytest.fixture(autouse=True)
async def five_entries(world: World) -> None:
    """Ward holds five entries, /e/0 to /e/4."""
    await seed(world, [f"/e/{i}" for i in range(5)])


def stored(world: World, group_id: str = "") -> int:
    gid = group_id or world.org_group_id
    return world.site.services.db.read(lambda c: store.count_below(c, gid, "/", 10**6))


async def erase(world: World) -> int:
    return await world.site.services.data_eraser.erase_pending()


async def test_trash_keeps_the_data_and_restore_brings_it_back(world: World) -> None:
    who = "org_admin"
    assert (await world.call(who, "DELETE", f"/v2/groups/{world.org_group_id}"))[0] == 200
    assert (await world.data(who, "GET", "e/1"))[0] == 404  # the group is gone
    assert await erase(world) == 0 and stored(world) == 5
    status, _ = await world.call(who, "POST", f"/v2/trash/{world.org_group_id}/restore")
    assert status == 200
    status, body = await world.data(who, "GET", "e/1")
    assert (status, body["data"]["value"]) == (200, {"p": "/e/1"})


async def test_erasing_the_trash_entry_erases_the_data(world: World) -> None:
    who = "org_admin"
    other = await world.new_group()
    await seed(world, ["/stays"], group=other)
    await world.call(who, "DELETE", f"/v2/groups/{world.org_group_id}")
    assert (await world.call(who, "DELETE", f"/v2/trash/{world.org_group_id}"))[0] == 200
    assert await erase(world) == 5
    assert stored(world) == 0 and stored(world, other) == 1


async def test_the_retention_sweep_erases_the_data(world: World) -> None:
    who = "org_admin"
    await world.call(who, "DELETE", f"/v2/groups/{world.org_group_id}")
    clock.advance(timedelta(days=31))
    await world.site.services.db.write(_purge)
    assert await erase(world) == 5 and stored(world) == 0


async def test_a_permanent_delete_erases_the_data(world: World) -> None:
    who = "org_admin"
    url = f"/v2/groups/{world.org_group_id}?permanent=true"
    assert (await world.call(who, "DELETE", url))[0] == 200
    assert await erase(world) == 5 and stored(world) == 0


async def test_a_project_in_the_trash_keeps_its_groups_data(world: World) -> None:
    who = "org_admin"
    project = await world.site.services.projects.create(world.admin, {"name": "Line 2"})
    group = await world.new_group(project_id=project)
    await seed(world, ["/p/1", "/p/2"], group=group)
    assert (await world.call(who, "DELETE", f"/v2/projects/{project}"))[0] == 200
    assert await erase(world) == 0 and stored(world, group) == 2
    assert (await world.call(who, "DELETE", f"/v2/trash/{project}"))[0] == 200
    assert await erase(world) == 2 and stored(world, group) == 0


async def test_an_organization_deleted_takes_its_data(world: World) -> None:
    url = f"/v2/orgs/{world.tenant.org_id}?force=true"
    assert (await world.call("staff_unscoped", "DELETE", url))[0] == 200
    assert await erase(world) == 5 and stored(world) == 0


async def test_large_erasures_go_in_batches(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    from edge.data import eraser

    monkeypatch.setattr(eraser, "BATCH", 2)
    url = f"/v2/groups/{world.org_group_id}?permanent=true"
    await world.call("org_admin", "DELETE", url)
    assert await erase(world) == 5 and stored(world) == 0
