"""Project access: who may manage it (role-by-role), its shape, its grantees, and the sessions
that end when someone loses project admin status.
"""

from __future__ import annotations

from typing import Any

import pytest

from storage import access as access_store
from tests.world import PROJECT_ADMIN_ONLY, PROJECT_ADMINS, PROJECT_READERS, World, table

CRUD_KEYS = {"can_create", "can_read", "can_update", "can_delete"}
NONE = dict.fromkeys(CRUD_KEYS, False)


def path(world: World, grantee_id: str, project_id: str | None = None) -> str:
    return f"/v2/projects/{project_id or world.project_id}/access/{grantee_id}"


def stored(world: World, grantee_id: str) -> dict[str, Any] | None:
    return world.site.services.db.read(lambda c: access_store.get(c, world.project_id, grantee_id))


async def works(world: World, token: str | None) -> bool:
    """Whether a token still authenticates (a revoked session is a 401)."""
    status, _ = await world.api.call("GET", "/v2/projects", token)
    assert status in (200, 401)
    return status == 200


# -- who may do what ---------------------------------------------------------------------------
CREATE = {who: 201 if status == 200 else status for who, status in PROJECT_ADMIN_ONLY.items()}


@pytest.mark.parametrize(("who", "expected"), table(CREATE))
async def test_create_by_role(world: World, who: str, expected: int) -> None:
    newbie = await world.add_user("newbie", project_id=world.project_id)  # in sight
    token = await world.token(who)
    body = {"can_read": True}
    status, reply = await world.api.call("POST", path(world, newbie), token, json=body)
    assert status == expected, reply
    row = stored(world, newbie)
    if status == 201:
        assert reply == {"message": "Success"}
        assert row is not None and row["can_read"] == 1 and row["is_admin"] == 0
    else:
        assert row is None


@pytest.mark.parametrize(("who", "expected"), table(PROJECT_READERS))
async def test_get_by_role(world: World, who: str, expected: int) -> None:
    token = await world.token(who)
    status, body = await world.api.call("GET", path(world, world.id("project_reader")), token)
    assert status == expected, body
    if status == 200:
        access = body["project_access"]
        assert access["grantee_id"] == world.id("project_reader") and access["can_read"] is True
        assert ("is_active" in access) is (who in PROJECT_ADMINS)


@pytest.mark.parametrize(("who", "expected"), table(PROJECT_ADMIN_ONLY))
async def test_patch_by_role(world: World, who: str, expected: int) -> None:
    token = await world.token(who)
    body = {"can_update": True}
    status, reply = await world.api.call(
        "PATCH", path(world, world.id("project_reader")), token, json=body
    )
    assert status == expected, reply
    row = stored(world, world.id("project_reader"))
    assert row is not None and row["can_update"] == (1 if status == 200 else 0)


@pytest.mark.parametrize(("who", "expected"), table(PROJECT_ADMIN_ONLY))
async def test_delete_by_role(world: World, who: str, expected: int) -> None:
    token = await world.token(who)
    status, body = await world.api.call("DELETE", path(world, world.id("project_reader")), token)
    assert status == expected, body
    assert (stored(world, world.id("project_reader")) is None) is (status == 200)


# -- shape and rules ------------------------------------------------------------------------------
async def test_created_access_reads_back_in_full(world: World) -> None:
    newbie = await world.add_user("newbie", project_id=world.project_id)  # in sight
    token = await world.token("project_admin")
    body = {
        "is_admin": False,
        "can_read": True,
        "tags": ["b", " a "],
        "is_delete_protected": True,
        "user_permissions": {"can_read": True},
        "group_permissions": {"can_create": True, "can_delete": True},
    }
    assert (await world.api.call("POST", path(world, newbie), token, json=body))[0] == 201
    status, reply = await world.api.call("GET", path(world, newbie), token)
    assert status == 200 and set(reply) == {"project_access"}
    access = reply["project_access"]
    assert access == {
        "id": world.project_id + newbie[:13],
        "project_id": world.project_id,
        "grantee_id": newbie,
        "is_admin": False,
        "can_read": True,
        "can_update": False,
        "user_permissions": {**NONE, "can_read": True},
        "device_permissions": NONE,
        "group_permissions": {**NONE, "can_create": True, "can_delete": True},
        "role_permissions": NONE,
        "tags": ["b", "a"],
        "is_delete_protected": True,
        "is_active": True,
        "project_name": "Apollo",
        "project_description": "",
        "project_tags": [],
        "created_date": access["created_date"],
        "created_by": world.id("project_admin"),
        "last_updated_date": access["created_date"],
        "last_updated_by": world.id("project_admin"),
    }
    assert len(access["id"]) == 29


async def test_is_active_cannot_be_set_on_create_and_only_admins_see_it(world: World) -> None:
    newbie = await world.add_user("newbie", project_id=world.project_id)  # in sight
    admin = await world.token("org_admin")
    status, body = await world.api.call(
        "POST", path(world, newbie), admin, json={"is_active": False}
    )
    assert (status, body) == (406, {"message": "is_active: is not a known field"})
    assert stored(world, newbie) is None
    reader = await world.token("project_reader")
    assert (await world.api.call("GET", f"/v2/projects/{world.project_id}", reader))[0] == 200
    body = {"is_active": False}
    assert (
        await world.api.call("PATCH", path(world, world.id("project_reader")), admin, json=body)
    )[0] == 200
    status, body = await world.api.call("GET", path(world, world.id("project_reader")), admin)
    assert body["project_access"]["is_active"] is False
    # An inactive access grants nothing: the reader no longer knows the project.
    assert (await world.api.call("GET", f"/v2/projects/{world.project_id}", reader))[0] == 404


async def test_grantees_must_be_users_or_roles_of_the_org(world: World) -> None:
    token = await world.token("org_admin")
    status, body = await world.api.call("POST", path(world, world.other.admin_id), token, json={})
    assert (status, body) == (404, {"message": "Grantee not found"})
    status, _ = await world.api.call("POST", path(world, world.second_project_id), token, json={})
    assert status == 404  # a project is not a grantee
    status, _ = await world.api.call("POST", path(world, "x" * 16), token, json={})
    assert status == 404
    outsider = world.id("gemini_user")  # home project: Gemini
    status, body = await world.api.call("POST", path(world, outsider), token, json={})
    assert (status, body) == (400, {"message": "grantee_id: this user belongs to another project"})
    insider = await world.add_user("insider", project_id=world.project_id)
    assert (await world.api.call("POST", path(world, insider), token, json={}))[0] == 201
    role = await world.new_role(name="Readers")
    assert (await world.api.call("POST", path(world, role), token, json={"can_read": True}))[
        0
    ] == 201
    assert stored(world, role) is not None and stored(world, role)["grantee_kind"] == "role"


async def test_existing_access_is_a_409(world: World) -> None:
    token = await world.token("org_admin")
    status, body = await world.api.call(
        "POST", path(world, world.id("project_reader")), token, json={"is_admin": True}
    )
    assert status == 409 and set(body) == {"message"}
    row = stored(world, world.id("project_reader"))
    assert row is not None and row["is_admin"] == 0


async def test_unknown_access_and_project_are_404(world: World) -> None:
    token = await world.token("org_admin")
    for method in ("GET", "PATCH", "DELETE"):
        kwargs = {"json": {}} if method == "PATCH" else {}
        status, body = await world.api.call(method, path(world, world.id("plain")), token, **kwargs)
        assert (status, body) == (404, {"message": "Project access not found"}), method
        status, body = await world.api.call(
            method, path(world, world.id("project_reader"), world.other_project_id), token, **kwargs
        )
        assert (status, body) == (404, {"message": "Project not found"}), method


async def test_patch_replaces_only_the_blocks_it_names(world: World) -> None:
    token = await world.token("org_admin")
    target = path(world, world.id("project_reader"))
    body = {"user_permissions": {"can_create": True}, "device_permissions": {"can_read": True}}
    assert (await world.api.call("PATCH", target, token, json=body))[0] == 200
    body = {"user_permissions": {"can_delete": True}, "tags": ["t"]}
    assert (await world.api.call("PATCH", target, token, json=body))[0] == 200
    access = (await world.api.call("GET", target, token))[1]["project_access"]
    assert access["user_permissions"] == {**NONE, "can_delete": True}
    assert access["device_permissions"] == {**NONE, "can_read": True}
    assert (access["tags"], access["can_read"]) == (["t"], True)
    status, body = await world.api.call(
        "PATCH", target, token, json={"user_permissions": {"can_fly": True}}
    )
    assert (status, body) == (406, {"message": "user_permissions.can_fly: is not a known field"})


async def test_delete_protection_needs_force(world: World) -> None:
    token = await world.token("project_admin")
    target = path(world, world.id("project_reader"))
    assert (await world.api.call("PATCH", target, token, json={"is_delete_protected": True}))[
        0
    ] == 200
    status, body = await world.api.call("DELETE", target, token)
    assert status == 409 and "delete protected" in body["message"]
    assert stored(world, world.id("project_reader")) is not None
    assert (await world.api.call("DELETE", target + "?force=true&permanent=true", token))[0] == 200
    assert stored(world, world.id("project_reader")) is None


# -- losing admin status ends sessions ------------------------------------------------------------
@pytest.mark.parametrize(
    "change",
    [
        ("PATCH", {"is_admin": False}),
        ("PATCH", {"is_active": False}),
        ("DELETE", None),
    ],
    ids=["is_admin-off", "deactivated", "deleted"],
)
async def test_a_project_admin_who_loses_it_is_signed_out(
    world: World, change: tuple[str, Any]
) -> None:
    method, body = change
    victim = await world.token("project_admin")
    scoped = await world.token("project_admin", project_id=world.project_id)
    bystander = await world.token("project_reader")
    admin = await world.token("org_admin")
    assert await works(world, victim) and await works(world, scoped)
    kwargs = {"json": body} if body is not None else {}
    target = path(world, world.id("project_admin"))
    assert (await world.api.call(method, target, admin, **kwargs))[0] == 200
    assert not await works(world, victim) and not await works(world, scoped)
    assert await works(world, bystander) and await works(world, admin)


async def test_changes_that_keep_admin_status_keep_sessions(world: World) -> None:
    victim = await world.token("project_admin")
    reader = await world.token("project_reader")
    admin = await world.token("org_admin")
    body = {"tags": ["x"], "can_read": False}
    target = path(world, world.id("project_admin"))
    assert (await world.api.call("PATCH", target, admin, json=body))[0] == 200
    body = {"can_read": False}
    assert (
        await world.api.call("PATCH", path(world, world.id("project_reader")), admin, json=body)
    )[0] == 200
    assert await works(world, victim) and await works(world, reader)


async def test_turning_off_a_roles_admin_access_signs_out_its_holders(world: World) -> None:
    second_holder = await world.add_user("second_holder")
    await world.grant("role", world.admin_role_id, second_holder)
    holders = [await world.token("role_admin"), await world.token("second_holder")]
    direct_admin = await world.token("project_admin")
    admin = await world.token("org_admin")
    assert all([await works(world, t) for t in holders])
    body = {"is_admin": False}
    assert (await world.api.call("PATCH", path(world, world.admin_role_id), admin, json=body))[
        0
    ] == 200
    assert not any([await works(world, t) for t in holders])
    assert await works(world, direct_admin)
    # Their grants changed with it: signed in again, the holder is no longer an admin.
    fresh = await world.token("role_admin")
    status, body = await world.api.call("GET", f"/v2/projects/{world.project_id}", fresh)
    assert status == 403  # still knows the project through the role's access, may not read it


async def test_an_org_admin_keeps_their_session_when_their_project_access_goes(
    world: World,
) -> None:
    admin = await world.token("org_admin")
    await world.grant("project", world.project_id, world.tenant.admin_id, is_admin=True)
    target = path(world, world.tenant.admin_id)
    assert (await world.api.call("DELETE", target, admin))[0] == 200
    assert await works(world, admin)  # still an admin of every project, as org admin
