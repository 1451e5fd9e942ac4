"""Groups: who may create, read, list, update, suspend and delete them; values and defaults.

The callers and targets are the world's (tests/world.py): Ward is the org-level group,
Lab the project-level one (in Apollo).
"""

from __future__ import annotations

from typing import Any

import pytest

from edge.kernel.principal import Principal
from tests.world import (
    ALL,
    GROUP_AND_ROLE_CREATORS,
    GROUP_AND_ROLE_CREATORS_IN_APOLLO,
    World,
    table,
)


async def get_group(world: World, group_id: str) -> dict[str, Any]:
    status, body = await world.call("org_admin", "GET", f"/v2/groups/{group_id}")
    assert status == 200, body
    return dict(body["group"])


async def list_ids(world: World, who: str, query: str = "", **token: Any) -> list[str]:
    status, body = await world.api.call(
        "GET", f"/v2/groups{query}", await world.token(who, **token)
    )
    assert status == 200, body
    return [g["id"] for g in body["groups"]]


# -- create ------------------------------------------------------------------------------


@pytest.mark.parametrize(("who", "expected"), table(GROUP_AND_ROLE_CREATORS))
async def test_who_may_create_an_org_level_group(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "POST", "/v2/groups", json={"name": "New"})
    assert status == expected, body
    if status == 201:
        assert set(body) == {"group"} and set(body["group"]) == {"id"}
        org = world.other if who == "other_admin" else world.tenant
        row = world.site.services.db.read(
            lambda c: c.execute("SELECT org_id FROM groups WHERE id = ?", (body["group"]["id"],))
        ).fetchall()
        assert row == [(org.org_id,)]


@pytest.mark.parametrize(("who", "expected"), table(GROUP_AND_ROLE_CREATORS_IN_APOLLO))
async def test_who_may_create_a_project_level_group(world: World, who: str, expected: int) -> None:
    body = {"name": "New", "project_id": world.project_id}
    status, reply = await world.call(who, "POST", "/v2/groups", json=body)
    assert status == expected, reply
    if status == 201:
        group = await get_group(world, reply["group"]["id"])
        assert group["project_id"] == world.project_id


async def test_a_new_group_has_every_field_and_its_defaults(world: World) -> None:
    status, body = await world.call(
        "org_admin", "POST", "/v2/groups", json={"name": "  Ward B ", "tags": ["a", "a", " b"]}
    )
    assert status == 201
    group_id = body["group"]["id"]
    group = await get_group(world, group_id)
    assert group == {
        "id": group_id,
        "name": "Ward B",
        "description": "",
        "tags": ["a", "b"],
        "is_active": True,
        "is_delete_protected": False,
        "require_delete_permission_to_put_data": False,
        "role_delete_protection_on_by_default": False,
        "num_history": 10,
        "created_date": group["created_date"],
        "created_by": world.tenant.admin_id,
        "last_updated_date": group["created_date"],
        "last_updated_by": world.tenant.admin_id,
    }


async def test_the_creator_gets_full_access_unless_declined(world: World) -> None:
    creator = "org_group_role_perms"
    _, made = await world.call(creator, "POST", "/v2/groups", json={"name": "Mine"})
    group_id, me = made["group"]["id"], world.id(creator)
    status, body = await world.call(creator, "GET", f"/v2/groups/{group_id}/access/{me}")
    assert status == 200, body
    access = body["group_access"]
    assert access["is_admin"] and access["can_read"] and access["can_update"]
    assert access["user_permissions"] == access["role_permissions"] == ALL
    assert (
        access["data_paths"]
        == access["file_paths"]
        == {"/": {"can_write": True, "can_read": True, "can_update": True, "can_delete": True}}
    )
    body = {"name": "Not mine", "create_own_access": False}
    _, made = await world.call(creator, "POST", "/v2/groups", json=body)
    status, _ = await world.call(creator, "GET", f"/v2/groups/{made['group']['id']}/access/{me}")
    assert status == 404


async def test_names_need_not_be_unique_and_are_checked(world: World) -> None:
    for name in ("Ward", "ward"):
        status, _ = await world.call("org_admin", "POST", "/v2/groups", json={"name": name})
        assert status == 201
    for body, status in (
        ({"name": "  "}, 400),
        ({"name": "x" * 129}, 400),
        ({}, 406),
        ({"name": 5}, 406),
        ({"name": "a", "colour": "red"}, 406),
        ({"name": "a", "is_active": False}, 406),
        ({"name": "a", "project_id": "nope"}, 400),
    ):
        got, reply = await world.call("org_admin", "POST", "/v2/groups", json=body)
        assert got == status, (body, reply)
        assert set(reply) == {"message"}


async def test_a_project_of_another_org_is_refused(world: World) -> None:
    body = {"name": "a", "project_id": world.other_project_id}
    status, reply = await world.call("org_admin", "POST", "/v2/groups", json=body)
    assert (status, reply) == (
        400,
        {"message": "project_id: does not name a project of this organization"},
    )


async def test_project_scope_puts_new_groups_in_that_project(world: World) -> None:
    token = await world.token("project_admin", project_id=world.project_id)
    status, body = await world.api.call("POST", "/v2/groups", token, json={"name": "Scoped"})
    assert status == 201, body
    assert (await get_group(world, body["group"]["id"]))["project_id"] == world.project_id


# -- settings that set defaults ----------------------------------------------------------
async def test_org_settings_set_new_group_defaults(world: World) -> None:
    staff_token = await world.token("staff_unscoped")
    settings = {
        "groups_require_delete_permission_to_put_data_by_default": True,
        "group_delete_protection_on_by_default": True,
    }
    status, _ = await world.api.call(
        "PATCH", f"/v2/orgs/{world.tenant.org_id}", staff_token, json=settings
    )
    assert status == 200
    group = await get_group(world, await world.new_group())
    assert group["require_delete_permission_to_put_data"] is True
    assert group["is_delete_protected"] is True
    explicit = await world.new_group(
        require_delete_permission_to_put_data=False, is_delete_protected=False
    )
    group = await get_group(world, explicit)
    assert not group["require_delete_permission_to_put_data"] and not group["is_delete_protected"]


async def test_project_settings_set_defaults_of_its_groups(world: World) -> None:
    project = await world.new_project(
        name="Mercury",
        groups_require_delete_permission_to_put_data_by_default=True,
        group_delete_protection_on_by_default=True,
    )
    inside = await get_group(world, await world.new_group(project))
    outside = await get_group(world, await world.new_group())
    assert inside["require_delete_permission_to_put_data"] and inside["is_delete_protected"]
    assert not outside["require_delete_permission_to_put_data"]
    assert not outside["is_delete_protected"]


@pytest.mark.parametrize(
    ("who", "project", "expected"),
    [
        ("org_admin", False, 201),
        ("staff", False, 201),
        ("org_group_role_perms", False, 403),
        ("project_admin", True, 201),
        ("project_group_role_perms", True, 403),
    ],
)
async def test_require_delete_permission_to_put_data_is_for_admins(
    world: World, who: str, project: bool, expected: int
) -> None:
    body: dict[str, Any] = {"name": "a", "require_delete_permission_to_put_data": True}
    if project:
        body["project_id"] = world.project_id
    status, reply = await world.call(who, "POST", "/v2/groups", json=body)
    assert status == expected, reply
    group_id = world.project_group_id if project else world.org_group_id
    patch = {"require_delete_permission_to_put_data": True}
    status, reply = await world.call(who, "PATCH", f"/v2/groups/{group_id}", json=patch)
    assert status == (200 if expected == 201 else 403), reply
    assert (await get_group(world, group_id))["require_delete_permission_to_put_data"] is (
        expected == 201
    )


# -- read --------------------------------------------------------------------------------
ORG_GROUP_READERS = {
    "staff": 200,
    "staff_unscoped": 403,
    "org_admin": 200,
    "project_admin": 404,
    "role_admin": 404,
    "org_user_perms": 404,
    "org_group_role_perms": 200,
    "org_project_perms": 404,
    "org_device_perms": 404,
    "project_user_perms": 404,
    "project_group_role_perms": 404,
    "project_device_perms": 404,
    "project_reader": 404,
    "project_updater": 404,
    "group_admin": 200,
    "group_user_perms": 403,
    "group_editor": 200,
    "group_device_perms": 403,
    "member": 403,
    "holder": 403,  # through the role, a member of the group
    "owner": 404,
    "plain": 404,
    "gemini_user": 404,
    "device_member": 403,
    "device_loner": 404,
    "device_boss": 200,
    "device_plain": 404,
    "other_admin": 404,
    "anonymous": 401,
}
PROJECT_GROUP_READERS = {
    **ORG_GROUP_READERS,
    "project_admin": 200,
    "role_admin": 200,
    "project_group_role_perms": 200,
    "group_admin": 404,
    "group_user_perms": 404,
    "group_editor": 404,
    "group_device_perms": 404,
    "member": 404,
    "holder": 404,
    "device_member": 404,
}


@pytest.mark.parametrize(("who", "expected"), table(ORG_GROUP_READERS))
async def test_who_may_read_an_org_level_group(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "GET", f"/v2/groups/{world.org_group_id}")
    assert status == expected, body
    if status == 200:
        assert body["group"]["id"] == world.org_group_id and "project_id" not in body["group"]
    else:
        assert set(body) == {"message"}


@pytest.mark.parametrize(("who", "expected"), table(PROJECT_GROUP_READERS))
async def test_who_may_read_a_project_level_group(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "GET", f"/v2/groups/{world.project_group_id}")
    assert status == expected, body
    if status == 200:
        assert body["group"]["project_id"] == world.project_id


async def test_unknown_group_is_404(world: World) -> None:
    status, body = await world.call("org_admin", "GET", "/v2/groups/abcdefghijklmnop")
    assert (status, body) == (404, {"message": "Group not found"})


# -- list --------------------------------------------------------------------------------
SEES = {
    "staff": {"org", "project"},
    "org_admin": {"org", "project"},
    "project_admin": {"project"},
    "role_admin": {"project"},
    "org_user_perms": set(),
    "org_group_role_perms": {"org", "project"},
    "org_project_perms": set(),
    "org_device_perms": set(),
    "project_user_perms": set(),
    "project_group_role_perms": {"project"},
    "project_device_perms": set(),
    "project_reader": set(),
    "project_updater": set(),
    "group_admin": {"org"},
    "group_user_perms": set(),
    "group_editor": {"org"},
    "group_device_perms": set(),
    "member": set(),
    "holder": set(),
    "owner": set(),
    "plain": set(),
    "gemini_user": set(),
    "device_member": set(),
    "device_loner": set(),
    "device_boss": {"org", "project"},
    "device_plain": set(),
    "other_admin": set(),
}


@pytest.mark.parametrize(("who", "expected"), sorted(SEES.items()))
async def test_lists_hold_only_the_groups_the_caller_may_read(
    world: World, who: str, expected: set[str]
) -> None:
    names = {world.org_group_id: "org", world.project_group_id: "project"}
    got = await list_ids(world, who)
    assert {names[g] for g in got} == expected and len(got) == len(expected)


@pytest.mark.parametrize(("who", "expected"), [("anonymous", 401), ("staff_unscoped", 403)])
async def test_lists_need_an_org_member(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "GET", "/v2/groups")
    assert status == expected and set(body) == {"message"}


async def test_project_scope_lists_only_that_projects_groups(world: World) -> None:
    assert await list_ids(world, "org_admin", project_id=world.project_id) == [
        world.project_group_id
    ]
    assert set(await list_ids(world, "org_admin")) == {world.org_group_id, world.project_group_id}


async def test_list_filters(world: World) -> None:
    second = await world.new_group(world.project_id, name="LAB two", tags=["x"])
    assert await list_ids(world, "org_admin", "?name=lab") == [world.project_group_id]
    assert await list_ids(world, "org_admin", "?name.regex=^(?i)lab") == [
        world.project_group_id,
        second,
    ]
    assert await list_ids(world, "org_admin", f"?project_id={world.project_id}") == [
        world.project_group_id,
        second,
    ]
    assert await list_ids(world, "org_admin", "?tags=x") == [second]
    assert await list_ids(world, "org_admin", "?search=two") == [second]
    assert await list_ids(world, "org_admin", "?is_active=false") == []
    status, body = await world.call("org_admin", "GET", "/v2/groups?object_count=")
    assert (status, body) == (200, {"object_count": 3})
    status, body = await world.call("org_admin", "GET", "/v2/groups?colour=red")
    assert status == 400 and body["message"].startswith("colour")


async def test_another_orgs_ids_never_appear(world: World) -> None:
    theirs = await world.site.services.groups.create(
        Principal("user", world.other.admin_id, None, world.other.org_id), {"name": "Ward"}
    )
    assert theirs not in await list_ids(world, "org_admin")
    assert await list_ids(world, "other_admin") == [theirs]
    status, _ = await world.call("org_admin", "GET", f"/v2/groups/{theirs}")
    assert status == 404
    status, _ = await world.call("org_admin", "PATCH", f"/v2/groups/{theirs}", json={})
    assert status == 404


# -- update ------------------------------------------------------------------------------
ORG_GROUP_UPDATERS = {**ORG_GROUP_READERS, "member": 403}


@pytest.mark.parametrize(("who", "expected"), table(ORG_GROUP_UPDATERS))
async def test_who_may_update_an_org_level_group(world: World, who: str, expected: int) -> None:
    path = f"/v2/groups/{world.org_group_id}"
    status, body = await world.call(who, "PATCH", path, json={"description": "Changed"})
    assert status == expected, body
    group = await get_group(world, world.org_group_id)
    assert (group["description"] == "Changed") is (expected == 200)
    if expected == 200:
        assert body == {"message": "Success"}
        if who != "staff":
            assert group["last_updated_by"] == world.id(who)


@pytest.mark.parametrize(("who", "expected"), table(PROJECT_GROUP_READERS))
async def test_who_may_update_a_project_level_group(world: World, who: str, expected: int) -> None:
    path = f"/v2/groups/{world.project_group_id}"
    status, body = await world.call(who, "PATCH", path, json={"name": "Renamed"})
    assert status == expected, body
    assert ((await get_group(world, world.project_group_id))["name"] == "Renamed") is (
        expected == 200
    )


async def test_update_never_requires_read(world: World) -> None:
    updater = await world.add_user("group_updater")
    await world.grant("group", world.org_group_id, updater, can_update=True)
    path = f"/v2/groups/{world.org_group_id}"
    status, _ = await world.call("group_updater", "GET", path)
    assert status == 403
    status, _ = await world.call("group_updater", "PATCH", path, json={"tags": ["t"]})
    assert status == 200
    assert (await get_group(world, world.org_group_id))["tags"] == ["t"]


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        ("org_admin", 200),
        ("org_group_role_perms", 200),
        ("group_admin", 403),
        ("group_editor", 403),
    ],
)
async def test_suspending_a_group_is_for_org_and_project_level_callers(
    world: World, who: str, expected: int
) -> None:
    path = f"/v2/groups/{world.org_group_id}"
    status, _ = await world.call(who, "PATCH", path, json={"is_active": False})
    assert status == expected
    assert (await get_group(world, world.org_group_id))["is_active"] is (expected != 200)


async def test_a_suspended_group_gives_its_members_nothing(world: World) -> None:
    path = f"/v2/groups/{world.org_group_id}"
    status, _ = await world.call("org_admin", "PATCH", path, json={"is_active": False})
    assert status == 200
    status, _ = await world.call("group_admin", "GET", path)
    assert status == 404
    assert await list_ids(world, "org_admin", "?is_active=false") == [world.org_group_id]
    status, _ = await world.call("org_admin", "PATCH", path, json={"is_active": True})
    assert status == 200
    status, _ = await world.call("group_admin", "GET", path)
    assert status == 200


async def test_patch_values_are_checked(world: World) -> None:
    path = f"/v2/groups/{world.org_group_id}"
    for body, status in (
        ({"name": ""}, 400),
        ({"description": "x" * 3000}, 400),
        ({"tags": "a"}, 406),
        ({"project_id": world.project_id}, 406),
        ({"num_history": 3}, 406),
    ):
        got, reply = await world.call("org_admin", "PATCH", path, json=body)
        assert got == status, (body, reply)


# -- delete ------------------------------------------------------------------------------
ORG_GROUP_DELETERS = {**ORG_GROUP_READERS, "group_editor": 403}


@pytest.mark.parametrize(("who", "expected"), table(ORG_GROUP_DELETERS))
async def test_who_may_delete_an_org_level_group(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "DELETE", f"/v2/groups/{world.org_group_id}")
    assert status == expected, body
    status, _ = await world.call("org_admin", "GET", f"/v2/groups/{world.org_group_id}")
    assert status == (404 if expected == 200 else 200)


@pytest.mark.parametrize(("who", "expected"), table(PROJECT_GROUP_READERS))
async def test_who_may_delete_a_project_level_group(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "DELETE", f"/v2/groups/{world.project_group_id}")
    assert status == expected, body


async def test_deleting_a_group_takes_its_access_with_it(world: World) -> None:
    status, _ = await world.call("org_admin", "DELETE", f"/v2/groups/{world.org_group_id}")
    assert status == 200
    left = world.site.services.db.read(
        lambda c: c.execute(
            "SELECT count(*) FROM access WHERE target_id = ?", (world.org_group_id,)
        )
    ).fetchall()
    assert left == [(0,)]


@pytest.mark.parametrize(
    ("who", "force", "expected"),
    [
        ("org_admin", False, 409),
        ("org_admin", True, 200),
        ("staff", True, 200),
        ("group_admin", False, 409),
        ("group_admin", True, 403),
        ("org_group_role_perms", True, 403),
    ],
)
async def test_delete_protection_and_admin_only_force(
    world: World, who: str, force: bool, expected: int
) -> None:
    path = f"/v2/groups/{world.org_group_id}"
    status, _ = await world.call("org_admin", "PATCH", path, json={"is_delete_protected": True})
    assert status == 200
    query = "?force=true" if force else ""
    status, body = await world.call(who, "DELETE", path + query)
    assert status == expected, body
    status, _ = await world.call("org_admin", "GET", path)
    assert status == (404 if expected == 200 else 200)


async def test_project_admins_may_force_in_their_project(world: World) -> None:
    path = f"/v2/groups/{world.project_group_id}"
    await world.call("org_admin", "PATCH", path, json={"is_delete_protected": True})
    status, body = await world.call("project_admin", "DELETE", path + "?force=&permanent=true")
    assert (status, body) == (200, {"message": "Success"})
