"""Users: who may do what (role-by-role tables, denials next to grants), what each caller
sees, value rules, uniqueness, deletion protection, token revocation and tenant isolation.
"""

from __future__ import annotations

from typing import Any

import pytest

from storage import outbox
from storage import users as user_store
from tests.tenants import PASSWORD
from tests.world import (
    ALL,
    CALLERS,
    DEVICES,
    TARGETS,
    USER_CREATORS,
    USER_CREATORS_IN_APOLLO,
    World,
    table,
    target_table,
)

# Status per caller for each target user, in the order of TARGETS: member (home project
# Apollo, a member of Ward), loner (an org-level user in no group), boss (an org admin, home
# project Apollo, a member of Ward).
READ = {
    "staff": (200, 200, 200),
    "staff_unscoped": (403, 403, 403),
    "org_admin": (200, 200, 200),
    "project_admin": (200, 404, 200),  # users whose home project is Apollo
    "role_admin": (200, 404, 200),
    "org_user_perms": (200, 200, 200),
    "org_group_role_perms": (404, 404, 404),
    "org_project_perms": (404, 404, 404),
    "org_device_perms": (404, 404, 404),
    "project_user_perms": (200, 404, 200),
    "project_group_role_perms": (404, 404, 404),
    "project_device_perms": (404, 404, 404),
    "project_reader": (404, 404, 404),
    "project_updater": (404, 404, 404),
    "group_admin": (200, 404, 200),  # members of Ward
    "group_user_perms": (200, 404, 200),
    "group_editor": (404, 404, 404),
    "group_device_perms": (404, 404, 404),
    "member": (200, 404, 404),  # themselves
    "holder": (404, 404, 404),
    "owner": (404, 404, 404),
    "plain": (404, 404, 404),
    "gemini_user": (404, 404, 404),
    "device_member": (404, 404, 404),  # a member of Ward, but not the user member
    "device_loner": (404, 404, 404),
    "device_boss": (200, 200, 200),
    "device_plain": (404, 404, 404),
    "other_admin": (404, 404, 404),
    "anonymous": (401, 401, 401),
}
WRITE = {  # PATCH and DELETE: as READ, but non-admins never act on an org admin (boss)
    **READ,
    "project_admin": (200, 404, 403),
    "role_admin": (200, 404, 403),
    "org_user_perms": (200, 200, 403),
    "project_user_perms": (200, 404, 403),
    "group_admin": (200, 404, 403),
    "group_user_perms": (200, 404, 403),
}
DELETE = {**WRITE, "member": (403, 404, 404)}  # no one deletes themselves


@pytest.mark.parametrize(("who", "target", "expected"), target_table(READ))
async def test_get_user_by_role(world: World, who: str, target: str, expected: int) -> None:
    status, body = await world.call(who, "GET", f"/v2/users/{world.id(target)}")
    assert status == expected, body
    if status == 200:
        assert body["user"]["id"] == world.id(target)
        assert body["user"]["username"] == target


@pytest.mark.parametrize(("who", "target", "expected"), target_table(WRITE))
async def test_patch_user_by_role(world: World, who: str, target: str, expected: int) -> None:
    path = f"/v2/users/{world.id(target)}"
    status, body = await world.call(who, "PATCH", path, json={"nickname": "Nick"})
    assert status == expected, body
    row = world.site.services.db.read(lambda c: user_store.get(c, world.id(target)))
    assert row is not None
    assert row["nickname"] == ("Nick" if status == 200 else None)


@pytest.mark.parametrize(("who", "target", "expected"), target_table(DELETE))
async def test_delete_user_by_role(world: World, who: str, target: str, expected: int) -> None:
    status, body = await world.call(who, "DELETE", f"/v2/users/{world.id(target)}")
    assert status == expected, body
    row = world.site.services.db.read(lambda c: user_store.get(c, world.id(target)))
    assert (row is None) == (status == 200)


@pytest.mark.parametrize(("who", "expected"), table(USER_CREATORS))
async def test_create_org_level_user_by_role(world: World, who: str, expected: int) -> None:
    assert await create_by_role(world, who, expected, in_project=False) == expected


@pytest.mark.parametrize(("who", "expected"), table(USER_CREATORS_IN_APOLLO))
async def test_create_user_in_project_by_role(world: World, who: str, expected: int) -> None:
    assert await create_by_role(world, who, expected, in_project=True) == expected


async def create_by_role(world: World, who: str, expected: int, *, in_project: bool) -> int:
    """The status the caller got (asserted here to be `expected`), with the row checked."""
    body: dict[str, Any] = {"email": "new@clinic.test"}
    if in_project:
        body["project_id"] = world.project_id
    status, reply = await world.call(who, "POST", "/v2/users", json=body)
    assert status == expected, reply
    if status == 201:
        row = world.site.services.db.read(lambda c: user_store.get(c, reply["user"]["id"]))
        assert row is not None and row["email"] == "new@clinic.test"
        assert row["project_id"] == (world.project_id if in_project else None)
        org = world.other.org_id if who == "other_admin" else world.tenant.org_id
        assert row["org_id"] == org
    return status


EVERYONE = {"member", "loner", "boss"}
LISTED: dict[str, set[str] | int] = {  # which target users each caller's list holds
    "staff": EVERYONE,
    "staff_unscoped": 403,
    "org_admin": EVERYONE,
    "project_admin": {"member", "boss"},
    "role_admin": {"member", "boss"},
    "org_user_perms": EVERYONE,
    "org_group_role_perms": set(),
    "org_project_perms": set(),
    "org_device_perms": set(),
    "project_user_perms": {"member", "boss"},
    "project_group_role_perms": set(),
    "project_device_perms": set(),
    "project_reader": set(),
    "project_updater": set(),
    "group_admin": {"member", "boss"},
    "group_user_perms": {"member", "boss"},
    "group_editor": set(),
    "group_device_perms": set(),
    "member": {"member"},
    "holder": set(),
    "owner": set(),
    "plain": set(),
    "gemini_user": set(),
    "device_member": set(),
    "device_loner": set(),
    "device_boss": EVERYONE,
    "device_plain": set(),
    "other_admin": set(),
    "anonymous": 401,
}


@pytest.mark.parametrize(("who", "expected"), table(LISTED))
async def test_list_users_by_role(world: World, who: str, expected: set[str] | int) -> None:
    status, body = await world.call(who, "GET", "/v2/users")
    if isinstance(expected, int):
        assert status == expected and set(body) == {"message"}, body
        return
    assert status == 200, body
    seen = {u["id"] for u in body["users"]}
    assert seen & {world.id(t) for t in TARGETS} == {world.id(t) for t in expected}
    if who not in ("staff", "other_admin", *DEVICES):
        assert world.id(who) in seen  # every user sees themselves (devices are no users)


# -- self ------------------------------------------------------------------------------------
async def test_plain_user_reads_and_updates_themselves_but_may_not_delete(world: World) -> None:
    """The rule is tested in tests/edge/accounts/test_standing.py; here, the statuses."""
    token = await world.token("plain")
    me = f"/v2/users/{world.id('plain')}"
    status, _ = await world.api.call("PATCH", me, token, json={"first_name": "Pat"})
    assert status == 200
    status, body = await world.api.call("DELETE", me, token)
    assert (status, body) == (403, {"message": "Not permitted to delete this user"})


async def test_a_user_may_deactivate_themselves_which_ends_their_session(world: World) -> None:
    token = await world.token("plain")
    me = f"/v2/users/{world.id('plain')}"
    status, _ = await world.api.call("PATCH", me, token, json={"is_active": False})
    assert status == 200
    status, _ = await world.api.call("GET", me, token)
    assert status == 401
    status, _ = await world.api.call(
        "POST",
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": world.email("plain"),
            "password": PASSWORD,
            "client_id": "clinic",
        },
    )
    assert status == 403


async def test_non_admins_may_not_suspend_admins(world: World) -> None:
    status, body = await world.call(
        "org_user_perms", "PATCH", f"/v2/users/{world.id('boss')}", json={"is_active": False}
    )
    assert status == 403, body
    status, _ = await world.call(
        "org_user_perms", "PATCH", f"/v2/users/{world.id('member')}", json={"is_active": False}
    )
    assert status == 200


# Moving a user's e-mail or phone number (where the public forgot-password route sends a
# reset) is a recovery step: as WRITE, but only the user themself and admins over the user
# (the recovery route's callers, tests/api/test_user_mfa_admin.py); other holders of user
# update rights are refused.
CHANNELS = {
    **WRITE,
    "org_user_perms": (403, 403, 403),
    "project_user_perms": (403, 404, 403),
    "group_user_perms": (403, 404, 403),
}


@pytest.mark.parametrize("channel", ["email", "phone_number"])
@pytest.mark.parametrize(("who", "target", "expected"), target_table(CHANNELS))
async def test_recovery_channels_by_role(
    world: World, who: str, target: str, expected: int, channel: str
) -> None:
    value = {"email": f"moved.{target}@elsewhere.test", "phone_number": "+15550107777"}[channel]
    status, body = await world.call(
        who, "PATCH", f"/v2/users/{world.id(target)}", json={channel: value}
    )
    assert status == expected, body
    row = world.site.services.db.read(lambda c: user_store.get(c, world.id(target)))
    assert row is not None and (row[channel] == value) == (status == 200)


async def test_the_same_address_in_another_case_is_no_move(world: World) -> None:
    path = f"/v2/users/{world.id('member')}"
    upper = world.email("member").upper()
    status, body = await world.call("org_user_perms", "PATCH", path, json={"email": upper})
    assert status == 200, body
    status, body = await world.call(
        "org_user_perms", "PATCH", path, json={"email": "someone.else@clinic.test"}
    )
    assert (status, body) == (
        403,
        {"message": "Only an admin over this user may change their email"},
    )


# A group admin is shielded as org and project admins are: a caller who is not an admin over
# them may not change, suspend or delete them unless the caller administers every group they
# administer. Group-level and org-level user rights (group_user_perms, org_user_perms) reach
# Ward's admin but may not act on them. Status per caller for (PATCH a name, suspend, delete).
GROUP_ADMIN = {
    **dict.fromkeys(CALLERS, (404, 404, 404)),
    "staff": (200, 200, 200),
    "staff_unscoped": (403, 403, 403),
    "org_admin": (200, 200, 200),
    "device_boss": (200, 200, 200),
    "org_user_perms": (403, 403, 403),
    "group_user_perms": (403, 403, 403),
    "group_admin": (200, 200, 200),  # themselves (an admin over their group's members)
    "anonymous": (401, 401, 401),
}


@pytest.mark.parametrize(("who", "expected"), table(GROUP_ADMIN))
async def test_acting_on_a_group_admin_by_role(
    world: World, who: str, expected: tuple[int, int, int]
) -> None:
    user_id = world.id("group_admin")
    path = f"/v2/users/{user_id}"
    named, _ = await world.call(who, "PATCH", path, json={"nickname": "Nick"})
    suspended, _ = await world.call(who, "PATCH", path, json={"is_active": False})
    if suspended == 200:
        await world.call("org_admin", "PATCH", path, json={"is_active": True})
    deleted, _ = await world.call(who, "DELETE", path)
    assert (named, suspended, deleted) == expected
    row = world.site.services.db.read(lambda c: user_store.get(c, user_id))
    assert (row is None) == (deleted == 200)
    assert row is None or (row["nickname"] == "Nick") == (named == 200)


async def test_group_user_rights_cannot_take_over_the_group_admin(world: World) -> None:
    """The chain the recovery route's check was meant to stop: move the group admin's
    e-mail to the attacker's address, then ask the public forgot-password route for a reset.
    The move is refused, so the reset mail goes nowhere the attacker reads."""
    target = world.id("group_admin")
    status, _ = await world.call("group_user_perms", "POST", f"/v2/users/{target}/recovery")
    assert status == 403
    status, body = await world.call(
        "group_user_perms", "PATCH", f"/v2/users/{target}", json={"email": "attacker@evil.test"}
    )
    assert status == 403, body
    form = {"client_id": "clinic", "email": "attacker@evil.test"}
    status, _ = await world.api.call("POST", "/v2/auth/forgot-password", data=form)
    assert status == 200
    mails = world.site.services.db.read(lambda c: outbox.by_purpose(c, "account_recovery"))
    assert mails == []
    row = world.site.services.db.read(lambda c: user_store.get(c, target))
    assert row is not None and row["email"] == world.email("group_admin")
    assert await world.token("group_admin")  # still theirs


# -- what each caller sees -------------------------------------------------------------------
ADMIN_FIELDS = {"has_temporary_password", "new_password_required", "is_active"}


async def get_user(world: World, who: str, target: str) -> dict[str, Any]:
    status, body = await world.call(who, "GET", f"/v2/users/{world.id(target)}")
    assert status == 200, body
    return dict(body["user"])


async def test_admins_see_admin_fields_and_holdings(world: World) -> None:
    await world.grant("role", world.project_role_id, world.id("member"))
    user = await get_user(world, "org_admin", "member")
    assert ADMIN_FIELDS <= set(user)
    assert user["is_active"] is True and user["has_temporary_password"] is False
    assert user["group_ids"] == [world.org_group_id]
    assert user["role_ids"] == [world.project_role_id]
    assert user["project_ids"] == []
    assert user["org_permissions"]["is_admin"] is False
    assert user["project_id"] == world.project_id


async def test_a_group_admin_is_an_admin_of_its_members(world: World) -> None:
    user = await get_user(world, "group_admin", "member")
    assert ADMIN_FIELDS <= set(user) and "org_permissions" in user
    boss = await get_user(world, "group_admin", "boss")
    assert not ADMIN_FIELDS & set(boss) and "org_permissions" not in boss


async def test_non_admin_readers_see_no_admin_fields_and_no_holdings(world: World) -> None:
    user = await get_user(world, "org_user_perms", "member")
    assert not ADMIN_FIELDS & set(user)
    for name in ("project_ids", "group_ids", "role_ids", "org_permissions"):
        assert name not in user  # omitted, never null
    assert user["custom_attributes"] == {} and user["restricted_custom_attributes"] == {}
    assert user["mfa_enabled"] is False and user["tags"] == []


async def test_holdings_show_where_the_caller_may_read_that_kind(world: World) -> None:
    await world.grant(
        "org",
        world.tenant.org_id,
        world.id("plain"),
        user_permissions={"can_read": True},
        group_permissions={"can_read": True},
    )
    user = await get_user(world, "plain", "member")
    assert user["group_ids"] == [world.org_group_id]
    assert "project_ids" not in user and "role_ids" not in user


async def test_a_user_sees_their_own_permissions_and_holdings(world: World) -> None:
    user = await get_user(world, "project_user_perms", "project_user_perms")
    assert not ADMIN_FIELDS & set(user)
    assert user["project_ids"] == [world.project_id] and user["group_ids"] == []
    assert user["role_ids"] == []
    assert user["org_permissions"] == {
        "is_admin": False,
        "can_read": False,
        "can_update": False,
        **{
            f"{r}_permissions": dict.fromkeys(ALL, False)
            for r in ("user", "device", "role", "group", "project")
        },
    }


async def test_project_scope_shows_project_admin_status_and_permissions(world: World) -> None:
    token = await world.token("project_admin", project_id=world.project_id)
    status, body = await world.api.call("GET", f"/v2/users/{world.id('project_admin')}", token)
    assert status == 200, body
    user = body["user"]
    assert user["is_project_admin"] is True
    assert user["project_permissions"]["is_admin"] is True
    status, body = await world.api.call("GET", "/v2/users", token)
    listed = {u["id"]: u for u in body["users"]}
    assert set(listed) == {world.id("member"), world.id("boss")}  # home project only
    assert listed[world.id("member")]["is_project_admin"] is False


async def test_restricted_custom_attributes_are_for_admins_only(world: World) -> None:
    member = f"/v2/users/{world.id('member')}"
    body = {"restricted_custom_attributes": {"tier": "gold"}}
    for who in ("org_user_perms", "member", "group_user_perms"):
        status, reply = await world.call(who, "PATCH", member, json=body)
        assert (status, reply) == (
            403,
            {"message": "restricted_custom_attributes: only admins may set it"},
        ), who
    for who in ("org_admin", "project_admin", "group_admin"):
        status, _ = await world.call(who, "PATCH", member, json=body)
        assert status == 200, who
    status, _ = await world.call("member", "PATCH", member, json={"custom_attributes": {"a": 1}})
    assert status == 200
    user = await get_user(world, "member", "member")
    assert user["custom_attributes"] == {"a": 1}
    assert user["restricted_custom_attributes"] == {"tier": "gold"}


async def test_pii_admin_only_shows_anonymous_accounts_to_non_admins(world: World) -> None:
    status, _ = await world.call("org_admin", "PATCH", "/v2/my-org", json={"pii_admin_only": True})
    assert status == 200
    user = await get_user(world, "org_user_perms", "member")
    assert set(user) == {
        "id",
        "username",
        "created_date",
        "last_updated_date",
        "is_delete_protected",
    }
    assert "email" in await get_user(world, "org_admin", "member")
    assert "email" in await get_user(world, "member", "member")
    status, body = await world.call("org_user_perms", "GET", "/v2/users?email=member@clinic.test")
    assert status == 403, body


# -- create: values and rules ----------------------------------------------------------------
async def create(world: World, body: dict[str, Any], who: str = "org_admin") -> tuple[int, Any]:
    return await world.call(who, "POST", "/v2/users", json=body)


async def created(world: World, body: dict[str, Any]) -> dict[str, Any]:
    status, reply = await create(world, body)
    assert status == 201 and set(reply) == {"user"} and set(reply["user"]) == {"id"}, reply
    return await get_user_by_id(world, reply["user"]["id"])


async def get_user_by_id(world: World, user_id: str) -> dict[str, Any]:
    status, body = await world.call("org_admin", "GET", f"/v2/users/{user_id}")
    assert status == 200, body
    return dict(body["user"])


async def test_create_defaults(world: World) -> None:
    user = await created(world, {"email": "Dana@Clinic.test"})
    assert user["username"] == "Dana@Clinic.test" and user["email"] == "Dana@Clinic.test"
    assert user["tags"] == [] and user["locale"] == "en-US" and user["zoneinfo"] == "UTC"
    assert user["has_temporary_password"] is True and user["new_password_required"] is True
    assert user["is_active"] is True and user["is_delete_protected"] is False
    assert user["created_by"] == world.tenant.admin_id
    for absent in ("phone_number", "first_name", "picture_base64", "last_seen"):
        assert absent not in user


async def test_create_with_every_field(world: World) -> None:
    user = await created(
        world,
        {
            "email": "erin@clinic.test",
            "username": "  Erin ",
            "phone_number": "+1 (555) 010-2000",
            "first_name": "Erin",
            "middle_name": "M",
            "last_name": "Lee",
            "nickname": "E",
            "locale": "en_gb",
            "zoneinfo": "Europe/Paris",
            "picture": "https://example.test/erin.png",
            "tags": ["a", " a ", "b"],
            "custom_attributes": {"age": 30},
            "restricted_custom_attributes": {"tier": "gold"},
            "is_delete_protected": True,
            "password": "erin-password-1",
        },
    )
    assert user["username"] == "Erin" and user["phone_number"] == "+15550102000"
    assert user["locale"] == "en-GB" and user["zoneinfo"] == "Europe/Paris"
    assert user["tags"] == ["a", "b"] and user["custom_attributes"] == {"age": 30}
    assert user["restricted_custom_attributes"] == {"tier": "gold"}
    assert user["has_temporary_password"] is False and user["new_password_required"] is False
    assert user["is_delete_protected"] is True and user["phone_number_verified"] is False
    token = await world.api.token("ERIN", "erin-password-1", client_id="clinic")
    assert token


async def test_temporary_password_is_flagged(world: World) -> None:
    user = await created(world, {"email": "t@clinic.test", "temp_password": "temporary-pw-1"})
    assert user["has_temporary_password"] is True and user["new_password_required"] is True


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"email": "a@clinic.test", "username": "ab"}, "username: must be at least 3 characters"),
        ({"email": "not-an-address"}, "email: must be an e-mail address"),
        ({"email": "a@clinic.test", "locale": "english"}, "locale: must be a locale such as en-US"),
        (
            {"email": "a@clinic.test", "zoneinfo": "Mars/Base"},
            "zoneinfo: must be an IANA time zone such as Europe/Paris",
        ),
        (
            {"email": "a@clinic.test", "phone_number": "12345"},
            "phone_number: must be an international phone number such as +15550102000",
        ),
        (
            {"email": "a@clinic.test", "password": "short"},
            "password: must be at least 8 characters",
        ),
        (
            {"email": "a@clinic.test", "password": "long-enough-1", "temp_password": "also-long-1"},
            "password: give either password or temp_password, not both",
        ),
        (
            {"email": "a@clinic.test", "project_id": "abcdefghijklmnop"},
            "project_id: does not name an active project of this org",
        ),
    ],
)
async def test_create_value_rules_are_400(world: World, body: dict[str, Any], message: str) -> None:
    assert await create(world, body) == (400, {"message": message})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "email: is required"),
        ({"email": 5}, "email: must be of type string"),
        ({"email": "a@clinic.test", "colour": "red"}, "colour: is not a known field"),
        (
            {"email": "a@clinic.test", "org_permissions": {"is_boss": True}},
            "org_permissions.is_boss: is not a known field",
        ),
    ],
)
async def test_create_shape_failures_are_406(
    world: World, body: dict[str, Any], message: str
) -> None:
    assert await create(world, body) == (406, {"message": message})


async def test_usernames_emails_and_phones_are_unique_without_case(world: World) -> None:
    await created(
        world, {"email": "bob@clinic.test", "username": "Bob", "phone_number": "+15550100001"}
    )
    clashes = [
        ({"email": "other@clinic.test", "username": "BOB"}, "username"),
        ({"email": "BOB@CLINIC.TEST"}, "email"),
        ({"email": "x@clinic.test", "username": "bob@clinic.test"}, "username"),
        ({"email": "y@clinic.test", "phone_number": "+1 555 010 0001"}, "phone_number"),
    ]
    for body, field in clashes:
        status, reply = await create(world, body)
        assert (status, reply) == (
            409,
            {"message": f"{field}: is already used by another user of this organization"},
        ), body
    status, _ = await world.call(
        "other_admin", "POST", "/v2/users", json={"email": "bob@clinic.test"}
    )
    assert status == 201  # unique within an organization only


async def test_patch_to_a_taken_username_is_409(world: World) -> None:
    path = f"/v2/users/{world.id('member')}"
    status, body = await world.call("org_admin", "PATCH", path, json={"username": "LONER"})
    assert status == 409, body
    status, _ = await world.call("org_admin", "PATCH", path, json={"username": "Member"})
    assert status == 200  # its own name in another case


async def test_org_permissions_are_for_org_admins_only(world: World) -> None:
    body = {"email": "z@clinic.test", "org_permissions": {"can_read": True}}
    status, reply = await create(world, body, who="org_user_perms")
    assert (status, reply) == (403, {"message": "org_permissions: only org admins may set them"})
    user = await created(world, body)
    assert user["org_permissions"]["can_read"] is True
    assert user["org_permissions"]["user_permissions"]["can_read"] is False


async def test_project_admins_set_project_permissions_in_their_project(world: World) -> None:
    member = f"/v2/users/{world.id('loner')}"
    body = {"project_permissions": {"user_permissions": {"can_read": True}}}
    status, reply = await world.call(
        "project_user_perms", "PATCH", f"/v2/users/{world.id('member')}", json=body
    )
    assert (status, reply) == (
        403,
        {"message": "project_permissions: only admins of the project may set them"},
    )
    token = await world.token("project_admin", project_id=world.project_id)
    status, reply = await world.api.call("PATCH", member, token, json=body)
    assert status == 404, reply  # out of its sight (tests/api/test_grant_reach.py)
    token = await world.token("org_admin", project_id=world.project_id)
    status, reply = await world.api.call("PATCH", member, token, json=body)
    assert status == 200, reply  # an org-level user joins the project through its access
    user = await get_user(world, "org_admin", "loner")
    assert user["project_ids"] == [world.project_id]
    status, reply = await world.call("org_admin", "PATCH", member, json=body)
    assert status == 400  # no project session and no home project: which project?


async def test_project_permissions_on_create_make_a_project_admin(world: World) -> None:
    body = {
        "email": "lead@clinic.test",
        "project_id": world.project_id,
        "project_permissions": {"is_admin": True},
    }
    status, reply = await create(world, body, who="project_admin")
    assert status == 201, reply
    status, listed = await world.call(
        "org_admin", "GET", f"/v2/users?project_id={world.project_id}&is_project_admin=true"
    )
    assert status == 200
    assert {u["id"] for u in listed["users"]} == {world.id("project_admin"), reply["user"]["id"]}


# -- delete protection -----------------------------------------------------------------------
async def test_delete_protection_and_force(world: World) -> None:
    status, _ = await world.call(
        "org_admin", "PATCH", "/v2/my-org", json={"user_delete_protection_on_by_default": True}
    )
    assert status == 200
    user = await created(world, {"email": "kept@clinic.test"})
    assert user["is_delete_protected"] is True
    path = f"/v2/users/{user['id']}"
    status, body = await world.call("org_user_perms", "DELETE", path)
    assert status == 409 and "delete protected" in body["message"]
    status, body = await world.call("org_user_perms", "DELETE", path + "?force=true")
    assert (status, body) == (403, {"message": "force: only admins may force a delete"})
    status, body = await world.call("org_admin", "DELETE", path + "?force=true&permanent=true")
    assert (status, body) == (200, {"message": "Success"})
    status, _ = await world.call("org_admin", "GET", path)
    assert status == 404


# -- sessions --------------------------------------------------------------------------------
async def test_losing_org_admin_revokes_tokens(world: World) -> None:
    """Which changes end sessions (suspension, a lost admin status; not other changes) is
    tested in tests/edge/accounts/test_users.py; here, that the token is refused after."""
    path = f"/v2/users/{world.id('loner')}"
    status, _ = await world.call(
        "org_admin", "PATCH", path, json={"org_permissions": {"is_admin": True}}
    )
    assert status == 200
    token = await world.token("loner")
    assert (await world.api.call("GET", path, token))[0] == 200
    status, _ = await world.call(
        "org_admin", "PATCH", path, json={"org_permissions": {"is_admin": False}}
    )
    assert status == 200
    assert (await world.api.call("GET", path, token))[0] == 401


async def test_losing_project_admin_revokes_tokens(world: World) -> None:
    token = await world.token("project_admin")
    path = f"/v2/users/{world.id('project_admin')}"
    project_token = await world.token("org_admin", project_id=world.project_id)
    status, body = await world.api.call(
        "PATCH", path, project_token, json={"project_permissions": {"is_admin": False}}
    )
    assert status == 200, body
    assert (await world.api.call("GET", path, token))[0] == 401


async def test_only_org_admins_make_org_admins(world: World) -> None:
    path = f"/v2/users/{world.id('plain')}"
    for who in ("org_user_perms", "project_admin", "plain"):
        status, _ = await world.call(
            who, "PATCH", path, json={"org_permissions": {"is_admin": True}}
        )
        assert status in (403, 404), who
    user = await get_user(world, "org_admin", "plain")
    assert user["is_org_admin"] is False


# -- lists -----------------------------------------------------------------------------------
async def list_ids(world: World, who: str, query: str) -> set[str]:
    status, body = await world.call(who, "GET", f"/v2/users?{query}")
    assert status == 200, body
    return {u["id"] for u in body["users"]}


async def test_exclude_admins(world: World) -> None:
    ward = f"group_id={world.org_group_id}"
    members = (
        "member",
        "boss",
        "group_admin",
        "group_user_perms",
        "group_editor",
        "group_device_perms",
    )
    everyone = {world.id(who) for who in members}  # users holding access to Ward
    assert await list_ids(world, "group_user_perms", ward) == everyone
    assert await list_ids(world, "group_user_perms", f"{ward}&exclude_admins=true") == everyone - {
        world.id("boss")
    }
    # An org or project admin asking: no effect. Without a group or project filter: none.
    assert await list_ids(world, "org_admin", f"{ward}&exclude_admins=true") == everyone
    apollo_users = {world.id("member"), world.id("boss")}
    assert await list_ids(world, "project_admin", f"{ward}&exclude_admins=true") == apollo_users
    assert world.id("boss") in await list_ids(world, "group_user_perms", "exclude_admins=true")
    apollo = f"project_id={world.project_id}&exclude_admins"
    assert world.id("boss") not in await list_ids(world, "group_user_perms", apollo)


async def test_group_filters(world: World) -> None:
    team = f"group_id={world.org_group_id}"
    assert await list_ids(world, "org_admin", f"{team}&is_group_admin=true") == {
        world.id("group_admin")
    }
    status, body = await world.call("org_admin", "GET", f"/v2/users?{team}")
    flags = {u["id"]: u["is_group_admin"] for u in body["users"]}
    assert flags[world.id("group_admin")] is True and flags[world.id("member")] is False
    status, body = await world.call("org_admin", "GET", "/v2/users?is_group_admin=true")
    assert (status, body) == (
        400,
        {"message": "is_group_admin: applies only together with group_id"},
    )


async def test_field_filters_search_and_sort(world: World) -> None:
    for name, age, city in (("ann", 31, "Lyon"), ("ben", 25, "Paris"), ("cat", 40, "Oslo")):
        await world.call(
            "org_admin",
            "POST",
            "/v2/users",
            json={
                "email": f"{name}@clinic.test",
                "username": name.upper(),
                "first_name": name,
                "custom_attributes": {"age": age, "city": city},
            },
        )

    async def names(query: str) -> list[str]:
        status, body = await world.call("org_admin", "GET", f"/v2/users?{query}")
        assert status == 200, body
        return [u["username"] for u in body["users"]]

    assert await names("username=ann") == ["ANN"]
    assert await names("email=BEN@clinic.test") == ["BEN"]
    assert await names("custom_attributes.age.gte=30&order_by=custom_attributes.age&desc=true") == [
        "CAT",
        "ANN",
    ]
    assert await names("search=paris") == ["BEN"]
    assert await names("search=ca&search_fields=first_name") == ["CAT"]
    assert await names("username_regex=^[AB]&order_by=username") == ["ANN", "BEN"]
    assert set(await names("is_org_admin=true")) == {"admin@clinic.test", "boss"}
    status, body = await world.call("org_admin", "GET", "/v2/users?object_count=true")
    assert status == 200 and set(body) == {"object_count"} and body["object_count"] >= 12


async def test_an_unknown_search_field_is_400_with_or_without_search(world: World) -> None:
    """Named alone it was ignored, although the document lists the fields it may name (with
    and without `search`: tests/edge/accounts/test_lists.py); here, the 400 Status."""
    status, body = await world.call("org_admin", "GET", "/v2/users?search_fields=bogus")
    assert status == 400 and body["message"].startswith("search_fields: 'bogus' is not")


async def test_role_filter_and_role_ids_in_lists(world: World) -> None:
    await world.grant("role", world.project_role_id, world.id("loner"))
    status, body = await world.call(
        "org_admin", "GET", f"/v2/users?role_id={world.project_role_id}"
    )
    assert status == 200 and [u["id"] for u in body["users"]] == [world.id("loner")]
    assert body["users"][0]["role_ids"] == [world.project_role_id]
    assert "group_ids" not in body["users"][0]  # holdings beyond roles: single reads only


async def test_phone_numbers_are_found_however_written(world: World) -> None:
    """The ways of writing one are tested in tests/edge/accounts/test_lists.py; here, that a
    `+`, spaces and brackets in the query string reach the filter."""
    await world.call(
        "org_admin",
        "PATCH",
        f"/v2/users/{world.id('loner')}",
        json={"phone_number": "+44 20 7946 0958"},
    )
    found = await list_ids(world, "org_admin", "phone_number=%2B44 (20) 7946-0958")
    assert found == {world.id("loner")}


async def test_is_active_filter_is_for_admins(world: World) -> None:
    status, body = await world.call("org_user_perms", "GET", "/v2/users?is_active=false")
    assert (status, body) == (403, {"message": "is_active: only admins may filter or sort by it"})


# -- isolation -------------------------------------------------------------------------------
async def test_users_of_another_org_are_invisible(world: World) -> None:
    other_user = await world.other.add_user("outsider")
    for method in ("GET", "PATCH", "DELETE"):
        kwargs: dict[str, Any] = {"json": {"nickname": "x"}} if method == "PATCH" else {}
        status, body = await world.call("org_admin", method, f"/v2/users/{other_user}", **kwargs)
        assert (status, body) == (404, {"message": "User not found"}), method
    assert other_user not in await list_ids(world, "org_admin", "")
    assert other_user not in await list_ids(world, "org_admin", f"group_id={world.org_group_id}")


async def test_roles_confer_user_permissions(world: World) -> None:
    role = await world.new_role(name="Readers")
    await world.grant("org", world.tenant.org_id, role, "role", user_permissions={"can_read": True})
    assert (await world.call("plain", "GET", f"/v2/users/{world.id('loner')}"))[0] == 404
    await world.grant("role", role, world.id("plain"))
    assert (await world.call("plain", "GET", f"/v2/users/{world.id('loner')}"))[0] == 200
    status, _ = await world.call(
        "plain", "PATCH", f"/v2/users/{world.id('loner')}", json={"nickname": "x"}
    )
    assert status == 403
