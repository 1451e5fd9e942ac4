"""Roles: who may create, read, list, update and delete them; their org and project
permissions; what they hold; and the sessions of their holders."""

from __future__ import annotations

from typing import Any

import pytest

from edge.kernel.principal import Principal
from tests.world import (
    GROUP_AND_ROLE_CREATORS,
    GROUP_AND_ROLE_CREATORS_IN_APOLLO,
    NONE,
    ORG_ROLE_READERS,
    World,
    table,
)

LEVEL_OFF = {"is_admin": False, "can_read": False, "can_update": False}
ORG_OFF = {
    **LEVEL_OFF,
    **{f"{r}_permissions": NONE for r in ("user", "device", "role", "group", "project")},
}
PROJECT_OFF = {
    **LEVEL_OFF,
    **{f"{r}_permissions": NONE for r in ("user", "device", "role", "group")},
}


async def get_role(world: World, role_id: str, who: str = "org_admin") -> dict[str, Any]:
    status, body = await world.call(who, "GET", f"/v2/roles/{role_id}")
    assert status == 200, body
    return dict(body["role"])


async def list_ids(world: World, who: str, query: str = "", **token: Any) -> list[str]:
    status, body = await world.api.call("GET", f"/v2/roles{query}", await world.token(who, **token))
    assert status == 200, body
    return [r["id"] for r in body["roles"]]


async def signed_in(world: World, token: str | None) -> bool:
    status, body = await world.api.call("GET", "/v2/roles", token)
    assert status in (200, 401), body
    return status == 200


# -- create ------------------------------------------------------------------------------


@pytest.mark.parametrize(("who", "expected"), table(GROUP_AND_ROLE_CREATORS))
async def test_who_may_create_an_org_level_role(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "POST", "/v2/roles", json={"name": "Porters"})
    assert status == expected, body
    if status == 201:
        assert set(body) == {"role"} and set(body["role"]) == {"id"}
        visible = who != "other_admin"
        status, _ = await world.call("org_admin", "GET", f"/v2/roles/{body['role']['id']}")
        assert status == (200 if visible else 404)


@pytest.mark.parametrize(("who", "expected"), table(GROUP_AND_ROLE_CREATORS_IN_APOLLO))
async def test_who_may_create_a_project_level_role(world: World, who: str, expected: int) -> None:
    body = {"name": "Porters", "project_id": world.project_id}
    status, reply = await world.call(who, "POST", "/v2/roles", json=body)
    assert status == expected, reply
    if status == 201:
        assert (await get_role(world, reply["role"]["id"]))["project_id"] == world.project_id


async def test_a_new_role_has_every_field(world: World) -> None:
    body = {
        "name": " Porters ",
        "description": "Move things",
        "tags": ["a"],
        "custom_attributes": {"floor": 3},
        "restricted_custom_attributes": {"badge": "x"},
        "org_permissions": {"can_read": True, "user_permissions": {"can_read": True}},
    }
    status, reply = await world.call("org_admin", "POST", "/v2/roles", json=body)
    assert status == 201, reply
    role_id = reply["role"]["id"]
    role = await get_role(world, role_id)
    assert role == {
        "id": role_id,
        "name": "Porters",
        "description": "Move things",
        "tags": ["a"],
        "is_active": True,
        "is_delete_protected": False,
        "is_org_admin": False,
        "custom_attributes": {"floor": 3},
        "restricted_custom_attributes": {"badge": "x"},
        "org_permissions": {
            **ORG_OFF,
            "can_read": True,
            "user_permissions": {**NONE, "can_read": True},
        },
        "project_ids": [],
        "group_ids": [],
        "created_date": role["created_date"],
        "created_by": world.tenant.admin_id,
        "last_updated_date": role["created_date"],
        "last_updated_by": world.tenant.admin_id,
    }


async def test_a_project_role_shows_its_project_permissions(world: World) -> None:
    body = {
        "name": "Leads",
        "project_id": world.project_id,
        "project_permissions": {"is_admin": True},
    }
    status, reply = await world.call("project_admin", "POST", "/v2/roles", json=body)
    assert status == 201, reply
    role = await get_role(world, reply["role"]["id"])
    assert role["project_permissions"] == {**PROJECT_OFF, "is_admin": True}
    assert role["is_project_admin"] is True and role["is_org_admin"] is False
    assert role["org_permissions"] == ORG_OFF
    assert role["project_ids"] == [world.project_id]


@pytest.mark.parametrize(
    ("who", "body", "expected"),
    [
        ("org_admin", {"org_permissions": {"is_admin": True}}, 201),
        ("org_group_role_perms", {"org_permissions": {"can_read": True}}, 403),
        ("project_admin", {"project_permissions": {"is_admin": True}}, 201),
        ("project_group_role_perms", {"project_permissions": {"can_read": True}}, 403),
        ("project_admin", {"org_permissions": {"can_read": True}}, 403),
        ("org_admin", {"project_permissions": {"can_read": True}, "project_id": None}, 400),
        ("project_admin", {"restricted_custom_attributes": {"a": 1}}, 201),
        ("project_group_role_perms", {"restricted_custom_attributes": {"a": 1}}, 403),
        ("project_group_role_perms", {"custom_attributes": {"a": 1}}, 201),
        ("org_admin", {"org_permissions": {"is_boss": True}}, 406),
        ("org_admin", {"org_permissions": {"user_permissions": {"can_fly": True}}}, 406),
    ],
)
async def test_who_may_set_permissions_and_restricted_attributes(
    world: World, who: str, body: dict[str, Any], expected: int
) -> None:
    payload = {"name": "R", "project_id": world.project_id, **body}
    status, reply = await world.call(who, "POST", "/v2/roles", json=payload)
    assert status == expected, reply
    if "project_id" in body:  # not a field of PatchRoleBody
        return
    status, reply = await world.call(who, "PATCH", f"/v2/roles/{world.project_role_id}", json=body)
    assert status == (200 if expected == 201 else expected), reply


async def test_role_values_are_checked(world: World) -> None:
    for body, status in (
        ({"name": ""}, 400),
        ({}, 406),
        ({"name": "a", "custom_attributes": []}, 406),
        ({"name": "a", "project_id": "nope"}, 400),
        ({"name": "a", "is_active": False}, 406),
    ):
        got, reply = await world.call("org_admin", "POST", "/v2/roles", json=body)
        assert got == status, (body, reply)


async def test_role_delete_protection_default_comes_from_settings(world: World) -> None:
    staff = await world.token("staff_unscoped")
    setting = {"role_delete_protection_on_by_default": True}
    status, _ = await world.api.call(
        "PATCH", f"/v2/orgs/{world.tenant.org_id}", staff, json=setting
    )
    assert status == 200
    assert (await get_role(world, await world.new_role()))["is_delete_protected"] is True


# -- read --------------------------------------------------------------------------------
PROJECT_ROLE_READERS = {
    **ORG_ROLE_READERS,
    "project_admin": 200,
    "role_admin": 200,
    "project_group_role_perms": 200,
    "group_admin": 404,
    "group_user_perms": 404,
    "group_editor": 404,
    "holder": 404,
}
ADMIN_VIEW = {"staff", "org_admin", "device_boss"}


@pytest.mark.parametrize(("who", "expected"), table(ORG_ROLE_READERS))
async def test_who_may_read_an_org_level_role(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "GET", f"/v2/roles/{world.org_role_id}")
    assert status == expected, body
    if status == 200:
        role = body["role"]
        assert role["id"] == world.org_role_id and role["group_ids"] == [world.org_group_id]
        assert ("is_active" in role) is (who in ADMIN_VIEW)
        assert "restricted_custom_attributes" in role


@pytest.mark.parametrize(("who", "expected"), table(PROJECT_ROLE_READERS))
async def test_who_may_read_a_project_level_role(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "GET", f"/v2/roles/{world.project_role_id}")
    assert status == expected, body
    if status == 200:
        assert ("is_active" in body["role"]) is (
            who in {*ADMIN_VIEW, "project_admin", "role_admin"}
        )


# -- list --------------------------------------------------------------------------------
SEES = {
    "staff": {"org", "project", "admins"},
    "org_admin": {"org", "project", "admins"},
    "project_admin": {"project"},
    "role_admin": {"project"},
    "org_user_perms": set(),
    "org_group_role_perms": {"org", "project", "admins"},
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
    "holder": {"org"},
    "owner": set(),
    "plain": set(),
    "gemini_user": set(),
    "device_member": set(),
    "device_loner": set(),
    "device_boss": {"org", "project", "admins"},
    "device_plain": set(),
    "other_admin": set(),
}


@pytest.mark.parametrize(("who", "expected"), sorted(SEES.items()))
async def test_lists_hold_only_the_roles_the_caller_may_read(
    world: World, who: str, expected: set[str]
) -> None:
    names = {
        world.org_role_id: "org",
        world.project_role_id: "project",
        world.admin_role_id: "admins",
    }
    got = await list_ids(world, who)
    assert {names[r] for r in got} == expected and len(got) == len(expected)


async def test_project_admins_list_roles_in_their_projects_groups(world: World) -> None:
    role = await world.new_role(name="Visitors")
    await world.grant("group", world.project_group_id, role, "role")
    assert set(await list_ids(world, "project_admin")) == {world.project_role_id, role}
    assert (await get_role(world, role, "project_admin"))["id"] == role


async def test_project_scope_lists_only_that_projects_roles(world: World) -> None:
    got = await list_ids(world, "org_admin", project_id=world.project_id)
    assert got == [world.project_role_id]


async def test_role_list_filters(world: World) -> None:
    admin_role = await world.new_role(
        world.project_id, name="Chiefs", project_permissions={"is_admin": True}
    )
    await world.grant("group", world.org_group_id, admin_role, "role", is_admin=True)
    await world.site.services.roles.patch(
        world.admin, world.org_role_id, {"custom_attributes": {"floor": 3}}
    )
    cases = {
        "?name=NURSES": [world.org_role_id],
        "?name_regex=^(Tech|Chi)": [world.project_role_id, admin_role],
        f"?project_id={world.project_id}": [world.project_role_id, admin_role],
        f"?group_id={world.org_group_id}": [world.org_role_id, admin_role],
        f"?group_id={world.org_group_id}&is_group_admin=true": [admin_role],
        f"?group_id={world.org_group_id}&is_group_admin=false": [world.org_role_id],
        "?is_project_admin=true": [admin_role],
        "?custom_attributes.floor.gte=2": [world.org_role_id],
        "?search=chie": [admin_role],
    }
    for query, expected in cases.items():
        assert await list_ids(world, "org_admin", query) == expected, query
    status, body = await world.call("org_admin", "GET", f"/v2/roles?group_id={world.org_group_id}")
    assert [r.get("is_group_admin") for r in body["roles"]] == [False, True]
    status, body = await world.call("org_admin", "GET", "/v2/roles?is_group_admin=true")
    assert (status, body) == (400, {"message": "is_group_admin: needs group_id"})


async def test_another_orgs_roles_never_appear(world: World) -> None:
    other = world.other
    theirs = await world.site.services.roles.create(
        Principal("user", other.admin_id, None, other.org_id), {"name": "Nurses"}
    )
    assert theirs not in await list_ids(world, "org_admin")
    assert await list_ids(world, "other_admin") == [theirs]
    for method in ("GET", "PATCH", "DELETE"):
        kwargs = {"json": {}} if method == "PATCH" else {}
        status, _ = await world.call("org_admin", method, f"/v2/roles/{theirs}", **kwargs)
        assert status == 404, method


# -- update ------------------------------------------------------------------------------
ORG_ROLE_UPDATERS = ORG_ROLE_READERS


@pytest.mark.parametrize(("who", "expected"), table(ORG_ROLE_UPDATERS))
async def test_who_may_update_an_org_level_role(world: World, who: str, expected: int) -> None:
    status, body = await world.call(
        who, "PATCH", f"/v2/roles/{world.org_role_id}", json={"description": "Changed"}
    )
    assert status == expected, body
    assert ((await get_role(world, world.org_role_id))["description"] == "Changed") is (
        expected == 200
    )


@pytest.mark.parametrize(("who", "expected"), table(PROJECT_ROLE_READERS))
async def test_who_may_update_a_project_level_role(world: World, who: str, expected: int) -> None:
    status, body = await world.call(
        who, "PATCH", f"/v2/roles/{world.project_role_id}", json={"name": "Renamed"}
    )
    assert status == expected, body


@pytest.mark.parametrize(
    ("who", "expected"),
    [("org_admin", 200), ("org_group_role_perms", 200), ("group_editor", 403), ("holder", 403)],
)
async def test_suspending_a_role_is_for_org_and_project_level_callers(
    world: World, who: str, expected: int
) -> None:
    status, _ = await world.call(
        who, "PATCH", f"/v2/roles/{world.org_role_id}", json={"is_active": False}
    )
    assert status == expected
    assert (await get_role(world, world.org_role_id))["is_active"] is (expected != 200)


@pytest.mark.parametrize(
    ("who", "role_kind", "expected"),
    [
        ("project_admin", "project_admin_role", 200),
        ("project_admin", "org_admin_role", 403),
    ],
)
async def test_only_those_who_outrank_a_role_change_it(
    world: World, who: str, role_kind: str, expected: int
) -> None:
    """Non-admins never patch or delete admin roles; project admins never org-admin ones.
    Who outranks whom is tested in tests/edge/tenancy/test_roles.py; here, the statuses."""
    levels = (
        {"org_permissions": {"is_admin": True}}
        if role_kind == "org_admin_role"
        else {"project_permissions": {"is_admin": True}}
    )
    role = await world.new_role(world.project_id, name="Bosses", **levels)
    await world.grant("group", world.org_group_id, role, "role")
    status, body = await world.call(who, "PATCH", f"/v2/roles/{role}", json={"name": "X"})
    assert status == expected, body
    status, body = await world.call(who, "DELETE", f"/v2/roles/{role}")
    assert status == expected, body


# -- delete ------------------------------------------------------------------------------
ORG_ROLE_DELETERS = {**ORG_ROLE_READERS, "holder": 403}


@pytest.mark.parametrize(("who", "expected"), table(ORG_ROLE_DELETERS))
async def test_who_may_delete_an_org_level_role(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "DELETE", f"/v2/roles/{world.org_role_id}")
    assert status == expected, body
    status, _ = await world.call("org_admin", "GET", f"/v2/roles/{world.org_role_id}")
    assert status == (404 if expected == 200 else 200)


@pytest.mark.parametrize(
    ("who", "force", "expected"),
    [
        ("org_admin", False, 409),
        ("org_admin", True, 200),
        ("org_group_role_perms", True, 403),
        ("project_admin", True, 200),
    ],
)
async def test_role_delete_protection_and_force(
    world: World, who: str, force: bool, expected: int
) -> None:
    path = f"/v2/roles/{world.project_role_id}"
    await world.call("org_admin", "PATCH", path, json={"is_delete_protected": True})
    status, body = await world.call(who, "DELETE", path + ("?force=true" if force else ""))
    assert status == expected, body


# -- role permissions are the holder's own -----------------------------------------------
async def test_a_role_gives_its_holders_its_permissions(world: World) -> None:
    status, _ = await world.call("plain", "POST", "/v2/groups", json={"name": "Mine"})
    assert status == 403
    grant = {"org_permissions": {"group_permissions": {"can_create": True}}}
    status, _ = await world.call("org_admin", "PATCH", f"/v2/roles/{world.org_role_id}", json=grant)
    assert status == 200
    path = f"/v2/roles/{world.org_role_id}/access/{world.id('plain')}"
    status, _ = await world.call("org_admin", "POST", path, json={})
    assert status == 201
    status, body = await world.call("plain", "POST", "/v2/groups", json={"name": "Mine"})
    assert status == 201, body
    status, _ = await world.call("org_admin", "PATCH", path, json={"is_active": False})
    assert status == 200
    status, _ = await world.call("plain", "POST", "/v2/groups", json={"name": "Again"})
    assert status == 403


async def test_project_role_admins_are_project_admins(world: World) -> None:
    levels = {"project_permissions": {"is_admin": True}}
    status, _ = await world.call(
        "org_admin", "PATCH", f"/v2/roles/{world.project_role_id}", json=levels
    )
    assert status == 200
    plain = world.id("plain")
    await world.grant("role", world.project_role_id, plain)
    body = {"name": "Theirs", "project_id": world.project_id}
    status, reply = await world.call("plain", "POST", "/v2/groups", json=body)
    assert status == 201, reply
    status, _ = await world.call("plain", "POST", "/v2/groups", json={"name": "Org level"})
    assert status == 403


# -- sessions of the holders -------------------------------------------------------------
async def test_turning_admin_off_logs_every_holder_out(world: World) -> None:
    """Which changes log holders out (and which keep them, and deleting the role) is tested
    in tests/edge/tenancy/test_roles.py; here, that the holders' tokens are refused."""
    role = await world.new_role(None, org_permissions={"is_admin": True})
    for name in ("plain", "member"):
        await world.grant("role", role, world.id(name))
    change = {"org_permissions": {"is_admin": False, "can_read": True}}
    tokens = [await world.token("plain"), await world.token("member")]
    bystander = await world.token("holder")
    assert all([await signed_in(world, t) for t in tokens])
    status, _ = await world.call("org_admin", "PATCH", f"/v2/roles/{role}", json=change)
    assert status == 200
    assert not any([await signed_in(world, t) for t in tokens])
    assert await signed_in(world, bystander)


async def test_deleting_a_plain_role_keeps_sessions(world: World) -> None:
    token = await world.token("holder")
    status, _ = await world.call("org_admin", "DELETE", f"/v2/roles/{world.org_role_id}")
    assert status == 200
    assert await signed_in(world, token)


# -- what a role holds -------------------------------------------------------------------
HELD_READERS = {**ORG_ROLE_READERS}


@pytest.mark.parametrize(("who", "expected"), table(HELD_READERS))
@pytest.mark.parametrize("what", ["groups", "projects"])
async def test_plain_read_is_enough_to_see_what_a_role_holds(
    world: World, who: str, expected: int, what: str
) -> None:
    await world.grant("project", world.project_id, world.org_role_id, "role", can_read=True)
    status, body = await world.call(who, "GET", f"/v2/roles/{world.org_role_id}/access/{what}")
    assert status == expected, body
    if status == 200:
        kind = what[:-1]
        items = body[f"{kind}_access"]
        target = world.org_group_id if kind == "group" else world.project_id
        assert [i[f"{kind}_id"] for i in items] == [target]
        assert items[0]["grantee_id"] == world.org_role_id and items[0]["is_active"] is True
        assert items[0][f"{kind}_name"] == ("Ward" if kind == "group" else "Apollo")


async def test_held_group_access_has_the_groups_fields_and_filters(world: World) -> None:
    await world.grant("group", world.project_group_id, world.org_role_id, "role", can_read=True)
    base = f"/v2/roles/{world.org_role_id}/access/groups"
    status, body = await world.call("org_admin", "GET", base)
    assert status == 200
    ward = body["group_access"][0]
    assert ward == {
        "id": world.org_group_id + world.org_role_id[:13],
        "group_id": world.org_group_id,
        "grantee_id": world.org_role_id,
        "is_admin": False,
        "can_read": False,
        "can_update": False,
        "user_permissions": NONE,
        "device_permissions": NONE,
        "role_permissions": NONE,
        "tags": [],
        "is_delete_protected": False,
        "is_active": True,
        "data_paths": {},
        "file_paths": {},
        "group_name": "Ward",
        "group_description": "",
        "group_tags": [],
        "created_date": ward["created_date"],
        "created_by": world.tenant.admin_id,
        "last_updated_date": ward["created_date"],
        "last_updated_by": world.tenant.admin_id,
    }
    cases = {
        "?can_read=true": [world.project_group_id],
        "?group_name=ward": [world.org_group_id],
        f"?project_id={world.project_id}": [world.project_group_id],
        "?search=lab": [world.project_group_id],
    }
    for query, expected in cases.items():
        status, body = await world.call("org_admin", "GET", base + query)
        assert [a["group_id"] for a in body["group_access"]] == expected, query
    status, body = await world.call("org_admin", "GET", base + "?ids_only=true")
    assert body == {"group_ids": [world.org_group_id, world.project_group_id]}
    status, body = await world.call("org_admin", "GET", base + "?object_count=true")
    assert body == {"object_count": 2}
    status, body = await world.call("org_admin", "GET", base + "?colour=red")
    assert status == 400


async def test_a_roles_org_access(world: World) -> None:
    path = f"/v2/roles/{world.org_role_id}/access/org"
    status, body = await world.call("holder", "GET", path)
    assert (status, body) == (404, {"message": "This role holds no organization access"})
    levels = {"org_permissions": {"can_read": True, "group_permissions": {"can_read": True}}}
    await world.call("org_admin", "PATCH", f"/v2/roles/{world.org_role_id}", json=levels)
    status, body = await world.call("holder", "GET", path)
    assert status == 200, body
    access = body["org_access"]
    assert access["org_id"] == world.tenant.org_id and access["grantee_id"] == world.org_role_id
    assert access["can_read"] and access["group_permissions"] == {**NONE, "can_read": True}
    assert access["project_permissions"] == NONE and "is_active" not in access
    status, _ = await world.call("member", "GET", path)
    assert status == 404
