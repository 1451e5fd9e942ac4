"""Role access: which accounts hold a role, who may grant it, the per-org limit, sessions."""

from __future__ import annotations

from typing import Any

import pytest

from tests.world import ALL, NONE, ORG_ROLE_READERS, World, table

ORG_ROLE_MANAGERS = {
    "staff": 201,
    "staff_unscoped": 403,
    "org_admin": 201,
    "project_admin": 404,
    "role_admin": 404,
    "org_user_perms": 404,
    "org_group_role_perms": 403,
    "org_project_perms": 404,
    "org_device_perms": 404,
    "project_user_perms": 404,
    "project_group_role_perms": 404,
    "project_device_perms": 404,
    "project_reader": 404,
    "project_updater": 404,
    "group_admin": 403,  # may read the role (it is in their group), not grant it
    "group_user_perms": 404,
    "group_editor": 403,
    "group_device_perms": 404,
    "member": 404,
    "holder": 403,
    "owner": 404,
    "plain": 404,
    "gemini_user": 404,
    "device_member": 404,
    "device_loner": 404,
    "device_boss": 201,
    "device_plain": 404,
    "other_admin": 404,
    "anonymous": 401,
}
PROJECT_ROLE_MANAGERS = {
    **ORG_ROLE_MANAGERS,
    "project_admin": 201,
    "role_admin": 201,
    "project_group_role_perms": 403,
    "group_admin": 404,
    "group_editor": 404,
    "holder": 404,
}


def path(role_id: str, account_id: str) -> str:
    return f"/v2/roles/{role_id}/access/{account_id}"


async def read_access(world: World, role_id: str, account_id: str) -> dict[str, Any] | None:
    status, body = await world.call("org_admin", "GET", path(role_id, account_id))
    if status == 404:
        return None
    assert status == 200, body
    return dict(body["role_access"])


async def signed_in(world: World, token: str | None) -> bool:
    status, _ = await world.api.call("GET", "/v2/groups", token)
    return status == 200


# -- create ------------------------------------------------------------------------------
@pytest.mark.parametrize(("who", "expected"), table(ORG_ROLE_MANAGERS))
async def test_who_may_grant_an_org_level_role(world: World, who: str, expected: int) -> None:
    plain = world.id("plain")
    status, body = await world.call(who, "POST", path(world.org_role_id, plain), json={})
    assert status == expected, body
    assert (await read_access(world, world.org_role_id, plain) is not None) is (expected == 201)


@pytest.mark.parametrize(("who", "expected"), table(PROJECT_ROLE_MANAGERS))
async def test_who_may_grant_a_project_level_role(world: World, who: str, expected: int) -> None:
    member = world.id("member")  # of Apollo: its admins read it
    status, body = await world.call(who, "POST", path(world.project_role_id, member), json={})
    assert status == expected, body


async def test_new_role_access_has_every_field(world: World) -> None:
    plain = world.id("plain")
    body = {"can_read": True, "user_permissions": {"can_read": True}, "tags": ["x"]}
    status, _ = await world.call("org_admin", "POST", path(world.org_role_id, plain), json=body)
    assert status == 201
    access = await read_access(world, world.org_role_id, plain)
    assert access == {
        "id": world.org_role_id + plain[:13],
        "role_id": world.org_role_id,
        "account_id": plain,
        "can_read": True,
        "can_update": False,
        "user_permissions": {**NONE, "can_read": True},
        "device_permissions": NONE,
        "tags": ["x"],
        "is_delete_protected": False,
        "is_active": True,
        "created_date": access["created_date"] if access else None,
        "created_by": world.tenant.admin_id,
        "last_updated_date": access["created_date"] if access else None,
        "last_updated_by": world.tenant.admin_id,
    }


async def test_roles_are_never_granted_to_roles(world: World) -> None:
    status, body = await world.call(
        "org_admin", "POST", path(world.org_role_id, world.project_role_id), json={}
    )
    assert (status, body) == (
        400,
        {"message": "account_id: roles cannot be granted to other roles"},
    )


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"is_active": False}, 406),
        ({"is_admin": True}, 406),
        ({"role_permissions": ALL}, 406),
        ({"tags": [1]}, 406),
    ],
)
async def test_role_access_values_are_checked(world: World, body: Any, status: int) -> None:
    got, reply = await world.call(
        "org_admin", "POST", path(world.org_role_id, world.id("plain")), json=body
    )
    assert got == status, reply


async def test_accounts_must_exist_in_the_org_and_not_hold_it_yet(world: World) -> None:
    for account in ("abcdefghijklmnop", world.other.admin_id):
        status, _ = await world.call("org_admin", "POST", path(world.org_role_id, account), json={})
        assert status == 404
    status, body = await world.call(
        "org_admin", "POST", path(world.org_role_id, world.id("holder")), json={}
    )
    assert (status, body) == (409, {"message": "This access already exists"})


async def test_the_creator_may_hold_a_new_role(world: World) -> None:
    body = {"name": "Mine", "create_own_access": True}
    status, reply = await world.call("org_admin", "POST", "/v2/roles", json=body)
    assert status == 201
    access = await read_access(world, reply["role"]["id"], world.tenant.admin_id)
    assert access is not None and access["can_read"] and access["user_permissions"] == ALL
    status, reply = await world.call("org_admin", "POST", "/v2/roles", json={"name": "Not mine"})
    assert await read_access(world, reply["role"]["id"], world.tenant.admin_id) is None


# -- the limit on roles per user ---------------------------------------------------------
async def test_an_account_holds_at_most_max_roles_per_user(world: World) -> None:
    plain = world.id("plain")
    staff = await world.token("staff_unscoped")
    org_path = f"/v2/orgs/{world.tenant.org_id}"
    status, _ = await world.api.call("PATCH", org_path, staff, json={"max_roles_per_user": 2})
    assert status == 200
    roles = [await world.new_role(name=f"R{i}") for i in range(3)]
    for role in roles[:2]:
        status, _ = await world.call("org_admin", "POST", path(role, plain), json={})
        assert status == 201
    status, body = await world.call("org_admin", "POST", path(roles[2], plain), json={})
    assert (status, body) == (
        400,
        {"message": "account_id: already holds the most roles allowed in this organization (2)"},
    )
    status, _ = await world.call("org_admin", "DELETE", path(roles[0], plain))
    assert status == 200
    status, _ = await world.call("org_admin", "POST", path(roles[2], plain), json={})
    assert status == 201
    status, _ = await world.api.call("PATCH", org_path, staff, json={"max_roles_per_user": 3})
    status, _ = await world.call("org_admin", "POST", path(roles[0], plain), json={})
    assert status == 201


async def test_only_staff_raise_the_limit(world: World) -> None:
    token = await world.token("org_admin")
    body = {"max_roles_per_user": 50}
    status, _ = await world.api.call("PATCH", f"/v2/orgs/{world.tenant.org_id}", token, json=body)
    assert status == 403


# -- project admins grant only roles within their reach ----------------------------------
@pytest.mark.parametrize(
    ("levels", "expected"),
    [
        ({}, 201),
        ({"project_permissions": {"is_admin": True}}, 201),
        ({"org_permissions": {"can_read": True}}, 403),
    ],
)
async def test_project_admins_grant_roles_within_their_reach(
    world: World, levels: dict[str, Any], expected: int
) -> None:
    role = await world.new_role(world.project_id, name="Scoped", **levels)
    status, body = await world.call(
        "project_admin", "POST", path(role, world.id("member")), json={}
    )
    assert status == expected, body


async def test_a_role_in_a_group_out_of_reach_needs_an_org_admin(world: World) -> None:
    await world.grant("group", world.org_group_id, world.project_role_id, "role")
    status, _ = await world.call(
        "project_admin", "POST", path(world.project_role_id, world.id("plain")), json={}
    )
    assert status == 403
    status, _ = await world.call(
        "org_admin", "POST", path(world.project_role_id, world.id("plain")), json={}
    )
    assert status == 201


# -- read --------------------------------------------------------------------------------
@pytest.mark.parametrize(("who", "expected"), table(ORG_ROLE_READERS))
async def test_who_may_read_role_access(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "GET", path(world.org_role_id, world.id("holder")))
    assert status == expected, body
    if status == 200:
        access = body["role_access"]
        assert access["account_id"] == world.id("holder")
        assert ("is_active" in access) is (who in {"staff", "org_admin", "device_boss"})


# -- update and delete -------------------------------------------------------------------
UPDATERS = {**ORG_ROLE_MANAGERS, "staff": 200, "org_admin": 200, "device_boss": 200}


@pytest.mark.parametrize(("who", "expected"), table(UPDATERS))
async def test_who_may_update_role_access(world: World, who: str, expected: int) -> None:
    holder = world.id("holder")
    body = {"device_permissions": {"can_read": True}, "can_update": False}
    status, reply = await world.call(who, "PATCH", path(world.org_role_id, holder), json=body)
    assert status == expected, reply
    access = await read_access(world, world.org_role_id, holder)
    assert access is not None
    assert access["device_permissions"]["can_read"] is (expected == 200)
    assert access["can_update"] is (expected != 200)


@pytest.mark.parametrize(("who", "expected"), table(UPDATERS))
async def test_who_may_take_a_role_away(world: World, who: str, expected: int) -> None:
    holder = world.id("holder")
    status, body = await world.call(who, "DELETE", path(world.org_role_id, holder))
    assert status == expected, body
    assert (await read_access(world, world.org_role_id, holder) is None) is (expected == 200)


async def test_protected_role_access_needs_force(world: World) -> None:
    target = path(world.org_role_id, world.id("holder"))
    await world.call("org_admin", "PATCH", target, json={"is_delete_protected": True})
    status, _ = await world.call("org_admin", "DELETE", target)
    assert status == 409
    status, _ = await world.call("org_admin", "DELETE", target + "?force=true&permanent=true")
    assert status == 200


# -- sessions ----------------------------------------------------------------------------
async def test_losing_an_admin_role_logs_only_that_account_out(world: World) -> None:
    role = await world.new_role(name="Admins", org_permissions={"is_admin": True})
    for name in ("plain", "member"):
        await world.grant("role", role, world.id(name))
    plain, member = await world.token("plain"), await world.token("member")
    assert await signed_in(world, plain) and await signed_in(world, member)
    status, _ = await world.call("org_admin", "DELETE", path(role, world.id("plain")))
    assert status == 200
    assert not await signed_in(world, plain)
    assert await signed_in(world, member)
    body = {"is_active": False}
    status, _ = await world.call("org_admin", "PATCH", path(role, world.id("member")), json=body)
    assert status == 200
    assert not await signed_in(world, member)


async def test_losing_a_plain_role_keeps_the_session(world: World) -> None:
    token = await world.token("holder")
    status, _ = await world.call("org_admin", "DELETE", path(world.org_role_id, world.id("holder")))
    assert status == 200
    assert await signed_in(world, token)


async def test_project_users_hold_only_their_projects_roles(world: World) -> None:
    outsider = world.id("gemini_user")  # home project: Gemini
    status, body = await world.call(
        "org_admin", "POST", path(world.project_role_id, outsider), json={}
    )
    assert (status, body) == (400, {"message": "account_id: this user belongs to another project"})
    status, body = await world.call("org_admin", "POST", path(world.org_role_id, outsider), json={})
    assert status == 201, body
