"""GET /v2/summary (an extension, api/summary.py): every count is the caller's own list
count, the org's content only for its admins, nothing for the anonymous."""

from __future__ import annotations

from typing import Any

import pytest

from tests.world import World

LISTS = {
    "projects": "/v2/projects",
    "users": "/v2/users",
    "groups": "/v2/groups",
    "roles": "/v2/roles",
    "devices": "/v2/devices",
}
CONTENT = {"data_entries", "files", "file_bytes", "open_tunnels"}
CALLERS = (
    "staff",
    "org_admin",
    "project_admin",
    "group_admin",
    "member",
    "plain",
    "holder",
    "device_member",
    "device_boss",
)
pytestmark = pytest.mark.world("content")


async def summary(world: World, who: str) -> dict[str, Any]:
    status, body = await world.call(who, "GET", "/v2/summary")
    assert status == 200, body
    return body["summary"]  # type: ignore[no-any-return]


async def listed(world: World, who: str, path: str, **params: str) -> int:
    status, body = await world.call(who, "GET", path, params={"object_count": "1", **params})
    assert status == 200, (path, body)
    return int(body["object_count"])


@pytest.mark.parametrize("who", CALLERS)
async def test_each_count_is_the_callers_own_list_count(world: World, who: str) -> None:
    counts = await summary(world, who)
    for name, path in LISTS.items():
        assert counts[name] == await listed(world, who, path), name
    online = await listed(world, who, "/v2/devices", is_online="true")
    assert counts["devices_online"] == online


async def test_a_plain_user_sees_fewer_users_than_the_org_admin(world: World) -> None:
    mine, admins = await summary(world, "plain"), await summary(world, "org_admin")
    assert mine["users"] < admins["users"] and mine["groups"] < admins["groups"]


@pytest.mark.parametrize(
    ("who", "sees_content"),
    [("staff", True), ("org_admin", True), ("project_admin", False), ("member", False)],
)
async def test_the_orgs_content_is_counted_for_its_admins_only(
    world: World, who: str, sees_content: bool
) -> None:
    counts = await summary(world, who)
    assert (CONTENT <= counts.keys()) is sees_content
    assert not (CONTENT & counts.keys()) or sees_content


async def test_content_counts_what_the_org_holds(world: World) -> None:
    before = await summary(world, "org_admin")
    status, _ = await world.upload("file_editor", "summary/new.bin", b"x" * 1000)
    assert status == 200
    await world.put_data("data_writer", "/summary/new", {"a": 1})
    after = await summary(world, "org_admin")
    assert after["files"] == before["files"] + 1
    assert after["file_bytes"] == before["file_bytes"] + 1000
    assert after["data_entries"] == before["data_entries"] + 1
    assert after["open_tunnels"] == 0


async def test_other_orgs_content_is_not_counted(world: World) -> None:
    status, _ = await world.upload("file_editor", "summary/theirs.bin", b"x" * 10)
    assert status == 200
    await world.put_data("data_writer", "/summary/theirs", 1)
    clinic = await summary(world, "org_admin")
    assert clinic["files"] >= 1 and clinic["data_entries"] >= 1
    other = await summary(world, "other_admin")
    assert other["files"] == 0 and other["data_entries"] == 0 and other["file_bytes"] == 0
    assert other["users"] == await listed(world, "other_admin", "/v2/users")


async def test_orgs_are_counted_for_staff_only(world: World) -> None:
    unscoped = await summary(world, "staff_unscoped")
    assert unscoped == {"orgs": 2}
    assert "orgs" not in await summary(world, "org_admin")


async def test_the_anonymous_get_a_401(world: World) -> None:
    status, body = await world.call("anonymous", "GET", "/v2/summary")
    assert status == 401 and set(body) == {"message"}


async def test_open_tunnels_are_counted_until_closed(world: World) -> None:
    world.keep_notices()
    tunnel = await world.open_tunnel()
    assert (await summary(world, "org_admin"))["open_tunnels"] == 1
    device = world.id("device_member")
    status, _ = await world.call(
        "org_admin", "DELETE", f"/v2/devices/{device}/tunnels/{tunnel['uuid']}"
    )
    assert status == 200
    assert (await summary(world, "org_admin"))["open_tunnels"] == 0
