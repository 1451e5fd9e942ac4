"""Group access: group admins manage it (never for org or project admins); values and views."""

from __future__ import annotations

from typing import Any

import pytest

from tests.world import ALL, NONE, World, table

MANAGERS = {
    "staff": 201,
    "staff_unscoped": 403,
    "org_admin": 201,
    "project_admin": 404,
    "role_admin": 404,
    "org_user_perms": 404,
    "org_group_role_perms": 403,  # may update the group, but only admins manage its access
    "org_project_perms": 404,
    "org_device_perms": 404,
    "project_user_perms": 404,
    "project_group_role_perms": 404,
    "project_device_perms": 404,
    "project_reader": 404,
    "project_updater": 404,
    "group_admin": 201,
    "group_user_perms": 403,
    "group_editor": 403,
    "group_device_perms": 403,
    "member": 403,
    "holder": 403,
    "owner": 404,
    "plain": 404,
    "gemini_user": 404,
    "device_member": 403,
    "device_loner": 404,
    "device_boss": 201,
    "device_plain": 404,
    "other_admin": 404,
    "anonymous": 401,
}
PROJECT_MANAGERS = {
    **MANAGERS,
    "project_admin": 201,
    "role_admin": 201,
    "project_group_role_perms": 403,
    "group_admin": 404,
    "group_user_perms": 404,
    "group_editor": 404,
    "group_device_perms": 404,
    "member": 404,
    "holder": 404,
    "device_member": 404,
}


def path(group_id: str, grantee_id: str) -> str:
    return f"/v2/groups/{group_id}/access/{grantee_id}"


async def read_access(world: World, group_id: str, grantee_id: str) -> dict[str, Any] | None:
    status, body = await world.call("org_admin", "GET", path(group_id, grantee_id))
    if status == 404:
        return None
    assert status == 200, body
    return dict(body["group_access"])


async def in_sight(world: World, *grantees: tuple[str, str]) -> None:
    """Put (grantee ID, kind) in Annex, a group group_admin administers, so that it reads
    them: an admin gives access only to what it can read (tests/api/test_grant_reach.py)."""
    annex = await world.new_group(name="Annex")
    await world.grant("group", annex, world.id("group_admin"), is_admin=True)
    for grantee_id, kind in grantees:
        await world.grant("group", annex, grantee_id, kind)


# -- create ------------------------------------------------------------------------------
@pytest.mark.parametrize(("who", "expected"), table(MANAGERS))
async def test_who_may_give_access_to_an_org_level_group(
    world: World, who: str, expected: int
) -> None:
    target = world.id("plain")
    await in_sight(world, (target, "user"))
    status, body = await world.call(who, "POST", path(world.org_group_id, target), json={})
    assert status == expected, body
    created = await read_access(world, world.org_group_id, target)
    assert (created is not None) is (expected == 201)
    if expected == 201:
        assert body == {"message": "Success"}


@pytest.mark.parametrize(("who", "expected"), table(PROJECT_MANAGERS))
async def test_who_may_give_access_to_a_project_level_group(
    world: World, who: str, expected: int
) -> None:
    target = world.id("member")  # of Apollo, not in Lab: Apollo's admins read it
    status, body = await world.call(who, "POST", path(world.project_group_id, target), json={})
    assert status == expected, body


async def test_new_access_has_every_field(world: World) -> None:
    grantee = world.id("plain")
    await in_sight(world, (grantee, "user"))
    body = {
        "can_read": True,
        "tags": ["t"],
        "user_permissions": {"can_read": True},
        "is_admin": False,
        "data_paths": {"notes": {"can_read": True, "can_write": True}, "/x/": {}},  # /x
        "file_paths": {"": {"can_delete": True}},
    }
    status, reply = await world.call(
        "group_admin", "POST", path(world.org_group_id, grantee), json=body
    )
    assert status == 201, reply
    access = await read_access(world, world.org_group_id, grantee)
    assert access is not None
    off = {"can_write": False, "can_read": False, "can_update": False, "can_delete": False}
    assert access == {
        "id": world.org_group_id + grantee[:13],
        "group_id": world.org_group_id,
        "grantee_id": grantee,
        "is_admin": False,
        "can_read": True,
        "can_update": False,
        "user_permissions": {**NONE, "can_read": True},
        "device_permissions": NONE,
        "role_permissions": NONE,
        "tags": ["t"],
        "is_delete_protected": False,
        "is_active": True,
        "data_paths": {
            "/notes": {**off, "can_read": True, "can_write": True},
            "/x": off,
        },
        "file_paths": {"/": {**off, "can_delete": True}},
        "created_date": access["created_date"],
        "created_by": world.id("group_admin"),
        "last_updated_date": access["created_date"],
        "last_updated_by": world.id("group_admin"),
    }
    assert len(access["id"]) == 29


async def test_legacy_orgs_have_no_can_update_on_paths(world: World) -> None:
    staff = await world.token("staff_unscoped")
    setting = {"use_legacy_data_and_files_permissions": True}
    status, _ = await world.api.call(
        "PATCH", f"/v2/orgs/{world.tenant.org_id}", staff, json=setting
    )
    assert status == 200
    grantee = world.id("plain")
    body = {"data_paths": {"/a": {"can_update": True}}}
    status, reply = await world.call(
        "org_admin", "POST", path(world.org_group_id, grantee), json=body
    )
    assert status == 400
    assert reply["message"].startswith("data_paths./a.can_update: is not available")
    body = {"data_paths": {"/a": {"can_read": True}}}
    status, _ = await world.call("org_admin", "POST", path(world.org_group_id, grantee), json=body)
    assert status == 201
    access = await read_access(world, world.org_group_id, grantee)
    assert access is not None
    assert access["data_paths"] == {
        "/a": {"can_write": False, "can_read": True, "can_delete": False}
    }


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"is_active": True}, 406),  # not settable on create
        ({"data_paths": {"/a": {"can_read": "yes"}}}, 406),
        ({"data_paths": {"/a": {"can_fly": True}}}, 406),
        ({"data_paths": ["/a"]}, 406),
        ({"data_paths": {"a": {}, "/a": {}}}, 400),
        ({"data_paths": {"/" + "a" * 1100: {}}}, 400),
        ({"user_permissions": {"can_read": 1}}, 406),
        ({"project_permissions": ALL}, 406),
    ],
)
async def test_access_values_are_checked(world: World, body: Any, status: int) -> None:
    got, reply = await world.call(
        "org_admin", "POST", path(world.org_group_id, world.id("plain")), json=body
    )
    assert got == status, reply
    assert set(reply) == {"message"}


UNREACHABLE = {  # grant paths no data entry or file can have, and why
    "//secret": "'//secret' has an empty segment",
    "/./secret": "'.' and '..' are not path segments",
    "/x/../secret": "'.' and '..' are not path segments",
    "/secret/.": "'.' and '..' are not path segments",
    "secret//": "'/secret/' has an empty segment",
    "/se\x01cret": "must not hold control characters",
    "/se\x85cret": "must not hold control characters",  # C1 too, as data and files refuse
}


@pytest.mark.parametrize("column", ["data_paths", "file_paths"])
@pytest.mark.parametrize("spelling", list(UNREACHABLE))
async def test_a_grant_path_no_data_or_file_can_have_is_refused(
    world: World, column: str, spelling: str
) -> None:
    """Such a grant was stored and matched nothing: `{"/": read, "//secret": {}}` meant to
    hide /secret and hid nothing. Refused on create and on patch, naming the path."""
    message = f"{column}: '{spelling}' is not a path any data or file can have: "
    body = {column: {"/": {"can_read": True}, spelling: {}}}
    where = path(world.org_group_id, world.id("plain"))
    got = await world.call("org_admin", "POST", where, json=body)
    assert got == (400, {"message": message + UNREACHABLE[spelling]})
    assert await read_access(world, world.org_group_id, world.id("plain")) is None
    where = path(world.org_group_id, world.id("member"))
    got = await world.call("group_admin", "PATCH", where, json=body)
    assert got == (400, {"message": message + UNREACHABLE[spelling]})
    stored = await read_access(world, world.org_group_id, world.id("member"))
    assert stored is not None and stored[column] == {}


async def test_grant_paths_keep_their_one_spelling(world: World) -> None:
    """A leading '/' added, one trailing '/' dropped, as data paths are spelled."""
    body = {"data_paths": {"a/b/": {"can_read": True}, "/": {}, "": {"can_read": True}}}
    where = path(world.org_group_id, world.id("plain"))
    got, reply = await world.call("org_admin", "POST", where, json=body)
    assert (got, reply) == (400, {"message": "data_paths: '' names the path '/' twice"})
    body = {"data_paths": {"a/b/": {"can_read": True}, "c.d/..e": {}}}
    assert (await world.call("org_admin", "POST", where, json=body))[0] == 201
    stored = await read_access(world, world.org_group_id, world.id("plain"))
    assert stored is not None and sorted(stored["data_paths"]) == ["/a/b", "/c.d/..e"]


async def test_spaces_at_a_grant_paths_ends_are_kept(world: World) -> None:
    """As file and data paths keep them: a grant meant to take `/report.pdf ` away was
    stored as `/report.pdf`, and took the other file away instead."""
    body = {"file_paths": {"/": {"can_read": True}, "/report.pdf ": {}, " lead": {}}}
    where = path(world.org_group_id, world.id("plain"))
    assert (await world.call("org_admin", "POST", where, json=body))[0] == 201
    stored = await read_access(world, world.org_group_id, world.id("plain"))
    assert stored is not None and sorted(stored["file_paths"]) == ["/", "/ lead", "/report.pdf "]


async def test_existing_access_is_a_conflict(world: World) -> None:
    status, body = await world.call(
        "org_admin", "POST", path(world.org_group_id, world.id("member")), json={}
    )
    assert (status, body) == (409, {"message": "This access already exists"})


async def test_grantees_are_users_and_roles_of_the_same_org(world: World) -> None:
    status, _ = await world.call(
        "org_admin",
        "POST",
        path(world.project_group_id, world.org_role_id),
        json={"can_read": True},
    )
    assert status == 201
    access = await read_access(world, world.project_group_id, world.org_role_id)
    assert access is not None and access["can_read"]
    for stranger in ("abcdefghijklmnop", world.other.admin_id):
        status, body = await world.call(
            "org_admin", "POST", path(world.org_group_id, stranger), json={}
        )
        assert status == 404, body


# -- group admins never act on admins ----------------------------------------------------
@pytest.mark.parametrize(
    ("who", "grantee", "expected"),
    [
        ("group_admin", "org_admin", 403),
        ("group_admin", "project_admin", 403),
        ("group_admin", "plain", 201),
        ("group_admin", "admin_role", 403),
        ("org_admin", "org_admin", 201),
        ("org_admin", "admin_role", 201),
    ],
)
async def test_group_admins_never_grant_to_admins(
    world: World, who: str, grantee: str, expected: int
) -> None:
    if grantee == "admin_role":
        target = await world.new_role(name="Admins", org_permissions={"is_admin": True})
    else:
        target = world.id(grantee)
    await in_sight(world, (target, "role" if grantee == "admin_role" else "user"))
    status, body = await world.call(who, "POST", path(world.org_group_id, target), json={})
    assert status == expected, body


@pytest.mark.parametrize(
    ("who", "grantee", "expected"),
    [
        ("project_admin", "plain", 200),
        ("project_admin", "second_project_admin", 200),
        ("project_admin", "org_admin", 403),
        ("group_admin2", "project_admin", 403),
        ("group_admin2", "plain", 200),
    ],
)
async def test_who_may_change_whose_access_in_a_project_group(
    world: World, who: str, grantee: str, expected: int
) -> None:
    grant = world.tenant.grant
    group = world.project_group_id
    second = await world.add_user("second_project_admin")
    await grant("project", world.project_id, second, is_admin=True)
    await grant("group", group, await world.add_user("group_admin2"), is_admin=True)
    for name in ("plain", "second_project_admin", "org_admin", "project_admin"):
        await grant("group", group, world.id(name))
    target = world.id(grantee)
    status, body = await world.call(who, "PATCH", path(group, target), json={"can_read": True})
    assert status == expected, body
    status, body = await world.call(who, "DELETE", path(group, target))
    assert status == expected, body
    assert (await read_access(world, group, target) is None) is (expected == 200)


async def test_group_admins_make_group_admins(world: World) -> None:
    plain = world.id("plain")
    await in_sight(world, (plain, "user"))
    body = {"is_admin": True}
    status, _ = await world.call("group_admin", "POST", path(world.org_group_id, plain), json=body)
    assert status == 201
    member = path(world.org_group_id, world.id("member"))
    assert (await world.call("plain", "PATCH", member, json={"can_read": True}))[0] == 200
    outsider = path(world.org_group_id, world.id("project_group_role_perms"))
    assert (await world.call("plain", "POST", outsider, json={}))[0] == 404  # out of sight


# -- read --------------------------------------------------------------------------------
READERS = {
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
    "member": 200,  # their own access
    "holder": 403,
    "owner": 404,
    "plain": 404,
    "gemini_user": 404,
    "device_member": 403,  # a member of Ward; not its own access
    "device_loner": 404,
    "device_boss": 200,
    "device_plain": 404,
    "other_admin": 404,
    "anonymous": 401,
}
ADMIN_VIEW = {"staff", "org_admin", "device_boss", "group_admin"}


@pytest.mark.parametrize(("who", "expected"), table(READERS))
async def test_who_may_read_access_and_who_sees_admin_fields(
    world: World, who: str, expected: int
) -> None:
    status, body = await world.call(who, "GET", path(world.org_group_id, world.id("member")))
    assert status == expected, body
    if status == 200:
        access = body["group_access"]
        assert access["grantee_id"] == world.id("member")
        admin_fields = {"is_active", "data_paths", "file_paths"}
        assert (admin_fields <= set(access)) is (who in ADMIN_VIEW)
        assert not (admin_fields & set(access)) or who in ADMIN_VIEW


async def test_missing_access_is_404(world: World) -> None:
    status, body = await world.call("org_admin", "GET", path(world.org_group_id, world.id("plain")))
    assert (status, body) == (404, {"message": "Access not found"})


# -- update ------------------------------------------------------------------------------
UPDATERS = {
    **MANAGERS,
    "staff": 200,
    "org_admin": 200,
    "group_admin": 200,
    "member": 403,
    "device_boss": 200,
}


@pytest.mark.parametrize(("who", "expected"), table(UPDATERS))
async def test_who_may_update_access(world: World, who: str, expected: int) -> None:
    target = world.id("member")
    body = {"can_read": True, "role_permissions": {"can_read": True}}
    status, reply = await world.call(who, "PATCH", path(world.org_group_id, target), json=body)
    assert status == expected, reply
    access = await read_access(world, world.org_group_id, target)
    assert access is not None
    assert access["can_read"] is (expected == 200)
    assert access["role_permissions"]["can_read"] is (expected == 200)


async def test_patch_replaces_what_it_names(world: World) -> None:
    target = world.id("group_editor")
    body = {
        "user_permissions": {"can_create": True},
        "data_paths": {"b": {"can_read": True}},
        "is_active": False,
        "is_delete_protected": True,
    }
    status, _ = await world.call(
        "group_admin", "PATCH", path(world.org_group_id, target), json=body
    )
    assert status == 200
    access = await read_access(world, world.org_group_id, target)
    assert access is not None
    assert access["user_permissions"] == {**NONE, "can_create": True}
    assert access["role_permissions"] == ALL  # not named: kept
    assert access["can_read"] and access["can_update"]
    assert list(access["data_paths"]) == ["/b"]
    assert access["is_active"] is False and access["is_delete_protected"] is True
    assert access["last_updated_by"] == world.id("group_admin")
    status, _ = await world.call("group_editor", "GET", f"/v2/groups/{world.org_group_id}")
    assert status == 404  # inactive access grants nothing, not even knowing of the group


# -- delete ------------------------------------------------------------------------------
@pytest.mark.parametrize(("who", "expected"), table(UPDATERS))
async def test_who_may_remove_access(world: World, who: str, expected: int) -> None:
    target = world.id("group_editor")
    status, body = await world.call(who, "DELETE", path(world.org_group_id, target))
    assert status == expected, body
    assert (await read_access(world, world.org_group_id, target) is None) is (expected == 200)


async def test_protected_access_needs_force(world: World) -> None:
    target = path(world.org_group_id, world.id("member"))
    await world.call("org_admin", "PATCH", target, json={"is_delete_protected": True})
    status, _ = await world.call("group_admin", "DELETE", target)
    assert status == 409
    status, body = await world.call("group_admin", "DELETE", target + "?force=true")
    assert (status, body) == (200, {"message": "Success"})


async def test_losing_group_admin_does_not_end_sessions(world: World) -> None:
    token = await world.token("group_admin")
    target = path(world.org_group_id, world.id("group_admin"))
    status, _ = await world.call("org_admin", "PATCH", target, json={"is_admin": False})
    assert status == 200
    status, body = await world.api.call("GET", f"/v2/groups/{world.org_group_id}", token)
    assert status == 403, body  # still signed in; no longer an admin, now a plain member


async def test_project_users_get_access_only_to_their_projects_groups(world: World) -> None:
    outsider = world.id("gemini_user")  # home project: Gemini
    insider = await world.add_user("insider", project_id=world.project_id)
    status, body = await world.call(
        "org_admin", "POST", path(world.project_group_id, outsider), json={}
    )
    assert (status, body) == (400, {"message": "grantee_id: this user belongs to another project"})
    for group, user in ((world.org_group_id, outsider), (world.project_group_id, insider)):
        status, body = await world.call("org_admin", "POST", path(group, user), json={})
        assert status == 201, body
