"""Devices: who may do what (role-by-role tables, denials next to grants, the devices
themselves among the callers), what each caller sees, value rules, and the rules of the
spec: only admins set `iot_scopes`, only admins or the owner change the owner, a device
updates and deactivates itself, deletion protection and `force`, suspension, and the
settings `device_creators_are_owners_by_default` and `device_owners_have_admin_access`.

The callers and targets are the world's (tests/world.py): the targets are device_member
(home project Apollo, a member of Ward), device_loner (an org-level device in no group)
and device_boss (an org admin, home project Apollo, a member of Ward), all three owned by
`owner`; each of them also calls with its own API key, so "the device itself" is the row
of a target acting on itself.
"""

from __future__ import annotations

from typing import Any

import pytest

from storage import devices as device_store
from tests.world import (
    DEVICE_CREATORS,
    DEVICE_CREATORS_IN_APOLLO,
    DEVICE_TARGETS,
    DEVICES,
    World,
    table,
    target_table,
)

# Status per caller for each target device, in the order of DEVICE_TARGETS: device_member,
# device_loner, device_boss.
READ = {
    "staff": (200, 200, 200),
    "staff_unscoped": (403, 403, 403),
    "org_admin": (200, 200, 200),
    "project_admin": (200, 404, 200),  # devices whose home project is Apollo
    "role_admin": (200, 404, 200),
    "org_user_perms": (404, 404, 404),  # user permissions are not device permissions
    "org_group_role_perms": (404, 404, 404),
    "org_project_perms": (404, 404, 404),
    "org_device_perms": (200, 200, 200),
    "project_user_perms": (404, 404, 404),
    "project_group_role_perms": (404, 404, 404),
    "project_device_perms": (200, 404, 200),
    "project_reader": (404, 404, 404),
    "project_updater": (404, 404, 404),
    "group_admin": (200, 404, 200),  # members of Ward
    "group_user_perms": (404, 404, 404),
    "group_editor": (404, 404, 404),
    "group_device_perms": (200, 404, 200),
    "member": (404, 404, 404),
    "holder": (404, 404, 404),
    "owner": (200, 200, 200),  # their devices
    "plain": (404, 404, 404),
    "gemini_user": (404, 404, 404),
    "device_member": (200, 404, 404),  # itself
    "device_loner": (404, 200, 404),  # itself
    "device_boss": (200, 200, 200),  # an org admin
    "device_plain": (404, 404, 404),
    "other_admin": (404, 404, 404),
    "anonymous": (401, 401, 401),
}
UPDATE = {  # PATCH and the credential resets: as READ, but the owner only reads, and
    **READ,  # non-admins never act on an org admin (device_boss)
    "project_admin": (200, 404, 403),
    "role_admin": (200, 404, 403),
    "org_device_perms": (200, 200, 403),
    "project_device_perms": (200, 404, 403),
    "group_admin": (200, 404, 403),
    "group_device_perms": (200, 404, 403),
    "owner": (403, 403, 403),
}
# A device may not delete itself, unless it is an org admin (who may do anything).
DELETE = {**UPDATE, "device_member": (403, 404, 404), "device_loner": (404, 403, 404)}


@pytest.mark.parametrize(("who", "target", "expected"), target_table(READ, DEVICE_TARGETS))
async def test_get_device_by_role(world: World, who: str, target: str, expected: int) -> None:
    status, body = await world.call(who, "GET", f"/v2/devices/{world.id(target)}")
    assert status == expected, body
    if status == 200:
        assert body["device"]["id"] == world.id(target)
        assert body["device"]["name"] == target


@pytest.mark.parametrize(("who", "target", "expected"), target_table(UPDATE, DEVICE_TARGETS))
async def test_patch_device_by_role(world: World, who: str, target: str, expected: int) -> None:
    path = f"/v2/devices/{world.id(target)}"
    status, body = await world.call(who, "PATCH", path, json={"site": "Lab 4"})
    assert status == expected, body
    assert world.device(target).site == ("Lab 4" if status == 200 else None)


@pytest.mark.parametrize(("who", "target", "expected"), target_table(DELETE, DEVICE_TARGETS))
async def test_delete_device_by_role(world: World, who: str, target: str, expected: int) -> None:
    device_id = world.id(target)
    status, body = await world.call(who, "DELETE", f"/v2/devices/{device_id}")
    assert status == expected, body
    row = world.site.services.db.read(lambda c: device_store.get(c, device_id))
    assert (row is None) == (status == 200)


@pytest.mark.parametrize(("who", "target", "expected"), target_table(UPDATE, DEVICE_TARGETS))
async def test_reset_api_key_by_role(world: World, who: str, target: str, expected: int) -> None:
    before = world.device(target).api_key_hash
    path = f"/v2/devices/{world.id(target)}/reset-api-key"
    status, body = await world.call(who, "POST", path)
    assert status == expected, body
    if status == 200:
        assert set(body) == {"api_key"} and body["api_key"].startswith("edk_")
    assert (world.device(target).api_key_hash != before) == (status == 200)


@pytest.mark.parametrize(("who", "target", "expected"), target_table(UPDATE, DEVICE_TARGETS))
async def test_reset_mqtt_credentials_by_role(
    world: World, who: str, target: str, expected: int
) -> None:
    path = f"/v2/devices/{world.id(target)}/reset-mqtt-credentials"
    status, body = await world.call(who, "POST", path)
    assert status == expected, body
    if status == 200:
        wanted = {"certificate", "root_ca", "public_key", "private_key", "broker", "root_scope"}
        assert set(body) == wanted
        org = world.tenant.org_id
        home = org if target == "device_loner" else f"{org}/{world.project_id}"  # org-level
        assert body["root_scope"] == home


@pytest.mark.parametrize(("who", "expected"), table(DEVICE_CREATORS))
async def test_create_org_level_device_by_role(world: World, who: str, expected: int) -> None:
    await create_by_role(world, who, expected, in_project=False)


@pytest.mark.parametrize(("who", "expected"), table(DEVICE_CREATORS_IN_APOLLO))
async def test_create_device_in_project_by_role(world: World, who: str, expected: int) -> None:
    await create_by_role(world, who, expected, in_project=True)


async def create_by_role(world: World, who: str, expected: int, *, in_project: bool) -> None:
    body: dict[str, Any] = {"name": "New sensor"}
    if in_project:
        body["project_id"] = world.project_id
    status, reply = await world.call(who, "POST", "/v2/devices", json=body)
    assert status == expected, reply
    if status == 201:
        row = world.site.services.db.read(lambda c: device_store.get(c, reply["device"]["id"]))
        assert row is not None and row.name == "New sensor"
        assert row.project_id == (world.project_id if in_project else None)
        org = world.other if who == "other_admin" else world.tenant
        assert row.org_id == org.org_id


EVERY_DEVICE = set(DEVICE_TARGETS)
IN_APOLLO_AND_WARD = {"device_member", "device_boss"}
LISTED: dict[str, set[str] | int] = {  # which target devices each caller's list holds
    "staff": EVERY_DEVICE,
    "staff_unscoped": 403,
    "org_admin": EVERY_DEVICE,
    "project_admin": IN_APOLLO_AND_WARD,
    "role_admin": IN_APOLLO_AND_WARD,
    "org_user_perms": set(),
    "org_group_role_perms": set(),
    "org_project_perms": set(),
    "org_device_perms": EVERY_DEVICE,
    "project_user_perms": set(),
    "project_group_role_perms": set(),
    "project_device_perms": IN_APOLLO_AND_WARD,
    "project_reader": set(),
    "project_updater": set(),
    "group_admin": IN_APOLLO_AND_WARD,
    "group_user_perms": set(),
    "group_editor": set(),
    "group_device_perms": IN_APOLLO_AND_WARD,
    "member": set(),
    "holder": set(),
    "owner": EVERY_DEVICE,
    "plain": set(),
    "gemini_user": set(),
    "device_member": {"device_member"},  # itself
    "device_loner": {"device_loner"},
    "device_boss": EVERY_DEVICE,
    "device_plain": set(),
    "other_admin": set(),
    "anonymous": 401,
}


@pytest.mark.parametrize(("who", "expected"), table(LISTED))
async def test_list_devices_by_role(world: World, who: str, expected: set[str] | int) -> None:
    status, body = await world.call(who, "GET", "/v2/devices")
    if isinstance(expected, int):
        assert status == expected and set(body) == {"message"}, body
        return
    assert status == 200, body
    seen = {d["id"] for d in body["devices"]}
    assert seen & {world.id(t) for t in DEVICE_TARGETS} == {world.id(t) for t in expected}
    if who == "device_plain":
        assert seen == {world.id("device_plain")}  # a device sees itself
    elif who in DEVICES:
        assert world.id(who) in seen


# -- what each caller sees -------------------------------------------------------------------
async def get_device(world: World, who: str, target: str) -> dict[str, Any]:
    status, body = await world.call(who, "GET", f"/v2/devices/{world.id(target)}")
    assert status == 200, body
    return dict(body["device"])


PLAIN_REQUIRED = {
    "name",
    "locale",
    "zoneinfo",
    "id",
    "created_date",
    "tags",
    "open_tunnels",
    "custom_attributes",
    "restricted_custom_attributes",
    "iot_scopes",
}


async def test_admins_see_is_active_and_holdings(world: World) -> None:
    await world.grant("role", world.org_role_id, world.id("device_member"), "device")
    device = await get_device(world, "org_admin", "device_member")
    assert PLAIN_REQUIRED <= set(device) and device["is_active"] is True
    assert device["open_tunnels"] == [] and device["iot_scopes"] == {}
    assert device["group_ids"] == [world.org_group_id]
    assert device["role_ids"] == [world.org_role_id]
    assert device["project_ids"] == [] and device["project_id"] == world.project_id
    assert device["owner_id"] == world.id("owner")
    assert device["org_permissions"]["is_admin"] is False


async def test_readers_get_the_plain_view_without_is_active(world: World) -> None:
    for who in ("org_device_perms", "owner", "device_member"):  # the last: itself
        device = await get_device(world, who, "device_member")
        assert PLAIN_REQUIRED <= set(device) and "is_active" not in device, who
        assert device["open_tunnels"] == []
    assert "org_permissions" not in await get_device(world, "org_device_perms", "device_member")
    itself = await get_device(world, "device_member", "device_member")
    assert itself["org_permissions"]["device_permissions"]["can_read"] is False
    assert itself["group_ids"] == [world.org_group_id]  # a device sees its own holdings


async def test_pii_admin_only_shows_anonymous_devices_to_non_admins(world: World) -> None:
    status, _ = await world.call("org_admin", "PATCH", "/v2/my-org", json={"pii_admin_only": True})
    assert status == 200
    device = await get_device(world, "org_device_perms", "device_member")
    assert device == {
        "id": world.id("device_member"),
        "username": "device_member",
        "created_date": device["created_date"],
        "last_updated_date": device["last_updated_date"],
        "is_delete_protected": False,
    }
    assert "open_tunnels" in await get_device(world, "org_admin", "device_member")
    assert "open_tunnels" in await get_device(world, "device_member", "device_member")  # itself
    assert "open_tunnels" in await get_device(world, "owner", "device_member")
    status, body = await world.call("org_device_perms", "GET", "/v2/devices?site=Lab")
    assert (status, body) == (
        403,
        {"message": "site: only admins may search device details in this org"},
    )
    status, _ = await world.call("org_device_perms", "GET", "/v2/devices?name=device_member")
    assert status == 200


# -- create ----------------------------------------------------------------------------------
async def create(world: World, body: dict[str, Any], who: str = "org_admin") -> Any:
    return await world.call(who, "POST", "/v2/devices", json=body)


async def test_create_returns_the_credentials_once(world: World) -> None:
    status, reply = await create(world, {"name": "Pump 1"})
    assert status == 201, reply
    made = reply["device"]
    assert set(made) == {
        "id",
        "api_key",
        "certificate",
        "root_ca",
        "public_key",
        "private_key",
        "broker",
        "root_scope",
    }
    assert made["root_scope"] == world.tenant.org_id and made["broker"] == "127.0.0.1"
    assert made["root_ca"] == "http://127.0.0.1:8080/v2/devices/root-ca.pem"
    assert made["certificate"].startswith("-----BEGIN CERTIFICATE-----")
    assert made["private_key"].startswith("-----BEGIN PRIVATE KEY-----")
    assert made["public_key"].startswith("-----BEGIN PUBLIC KEY-----")
    row = world.site.services.db.read(lambda c: device_store.get(c, made["id"]))
    assert row is not None and made["api_key"] not in str(row.api_key_hash)
    device = (await world.call("org_admin", "GET", f"/v2/devices/{made['id']}"))[1]["device"]
    assert "api_key" not in device and "private_key" not in device


async def test_create_with_every_field(world: World) -> None:
    body = {
        "name": "  Pump 2 ",
        "manufacturer": "Acme",
        "product": "P-100",
        "site": "Hall B",
        "serial_number": "SN-0042",
        "mac_address": "00:1A:2B:3C:4D:5E",
        "locale": "en_gb",
        "zoneinfo": "Europe/Paris",
        "picture": "https://example.test/pump.png",
        "tags": ["a", " a ", "b"],
        "custom_attributes": {"floor": 2},
        "restricted_custom_attributes": {"tier": "gold"},
        "iot_scopes": {"telemetry/": {"can_publish": True}},
        "is_delete_protected": True,
        "owner_id": world.id("plain"),
        "project_id": world.project_id,
    }
    status, reply = await create(world, body)
    assert status == 201, reply
    assert reply["device"]["owner_id"] == world.id("plain")
    device = (await world.call("org_admin", "GET", f"/v2/devices/{reply['device']['id']}"))[1]
    device = device["device"]
    for name in ("manufacturer", "product", "site", "serial_number", "mac_address", "picture"):
        assert device[name] == body[name], name
    assert device["name"] == "Pump 2" and device["locale"] == "en-GB"
    assert device["tags"] == ["a", "b"] and device["custom_attributes"] == {"floor": 2}
    assert device["iot_scopes"] == {"/telemetry": {"can_publish": True, "can_subscribe": False}}
    assert device["is_delete_protected"] is True and device["project_id"] == world.project_id
    assert device["api_key_last_changed"] and device["mqtt_credentials_last_changed"]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({}, 406, "name: is required"),
        ({"name": 5}, 406, "name: must be of type string"),
        ({"name": "x", "colour": "red"}, 406, "colour: is not a known field"),
        ({"name": " "}, 400, "name: must not be empty"),
        ({"name": "x", "locale": "english"}, 400, "locale: must be a locale such as en-US"),
        (
            {"name": "x", "zoneinfo": "Mars/Base"},
            400,
            "zoneinfo: must be an IANA time zone such as Europe/Paris",
        ),
        (
            {"name": "x", "iot_scopes": {"a/#": {}}},
            400,
            "iot_scopes: 'a/#' is not a scope: no wildcards or empty levels",
        ),
        (
            {"name": "x", "owner_id": "abcdefghijklmnop"},
            400,
            "owner_id: does not name a user of this organization",
        ),
        (
            {"name": "x", "project_id": "abcdefghijklmnop"},
            400,
            "project_id: does not name an active project of this org",
        ),
    ],
)
async def test_create_value_rules(
    world: World, body: dict[str, Any], status: int, message: str
) -> None:
    assert await create(world, body) == (status, {"message": message})


async def test_names_are_unique_in_an_org_without_case(world: World) -> None:
    """The rule (case, renames, other orgs) is tested in
    tests/edge/accounts/test_device_kind.py; here, the 409 Status."""
    status, reply = await create(world, {"name": "DEVICE_MEMBER"})
    assert (status, reply) == (
        409,
        {"message": "name: is already used by another device of this organization"},
    )


@pytest.mark.parametrize("name", ["iot_scopes", "restricted_custom_attributes", "is_active"])
async def test_admin_only_fields_on_create(world: World, name: str) -> None:
    value: Any = {} if name != "is_active" else False
    status, reply = await create(world, {"name": "n", name: value}, who="org_device_perms")
    assert (status, reply) == (403, {"message": f"{name}: only admins may set it"})
    status, _ = await create(world, {"name": "n", name: value})
    assert status == 201


# -- rules of the spec -----------------------------------------------------------------------
SCOPES = {"iot_scopes": {"alarms": {"can_subscribe": True}}}


ONLY_ADMINS = "iot_scopes: only admins may set it"
NOT_FOUND = "Device not found"
IOT_SCOPES = {  # PATCH device_member's iot_scopes: (status, message), None for success
    "staff": (200, None),
    "staff_unscoped": (403, "Devices live in an organization: staff must sign in with scope=<org>"),
    "org_admin": (200, None),
    "project_admin": (200, None),  # admins of its home project
    "role_admin": (200, None),
    "org_user_perms": (404, NOT_FOUND),
    "org_group_role_perms": (404, NOT_FOUND),
    "org_project_perms": (404, NOT_FOUND),
    "org_device_perms": (403, ONLY_ADMINS),  # may update it, not as an admin
    "project_user_perms": (404, NOT_FOUND),
    "project_group_role_perms": (404, NOT_FOUND),
    "project_device_perms": (403, ONLY_ADMINS),
    "project_reader": (404, NOT_FOUND),
    "project_updater": (404, NOT_FOUND),
    "group_admin": (200, None),  # admins of a group it belongs to
    "group_user_perms": (404, NOT_FOUND),
    "group_editor": (404, NOT_FOUND),
    "group_device_perms": (403, ONLY_ADMINS),
    "member": (404, NOT_FOUND),
    "holder": (404, NOT_FOUND),
    "owner": (403, "Not permitted to update this device"),  # reads it, no more
    "plain": (404, NOT_FOUND),
    "gemini_user": (404, NOT_FOUND),
    "device_member": (403, ONLY_ADMINS),  # itself
    "device_loner": (404, NOT_FOUND),
    "device_boss": (200, None),  # an org admin
    "device_plain": (404, NOT_FOUND),
    "other_admin": (404, NOT_FOUND),
    "anonymous": (401, "Authentication required: send 'Authorization: Bearer <token>'"),
}


@pytest.mark.parametrize(("who", "expected"), table(IOT_SCOPES))
async def test_only_admins_set_iot_scopes_with_a_leading_slash(
    world: World, who: str, expected: tuple[int, str | None]
) -> None:
    path = f"/v2/devices/{world.id('device_member')}"
    status, body = await world.call(who, "PATCH", path, json=SCOPES)
    assert (status, body) == (expected[0], {"message": expected[1] or "Success"})
    scopes = {"/alarms": {"can_publish": False, "can_subscribe": True}} if status == 200 else {}
    assert world.device("device_member").iot_scopes == scopes


async def test_only_admins_or_the_owner_change_the_owner(world: World) -> None:
    """Who may is tested in tests/edge/accounts/test_devices.py; here, the statuses."""
    path = f"/v2/devices/{world.id('device_member')}"
    to_plain = {"owner_id": world.id("plain")}
    status, body = await world.call("org_device_perms", "PATCH", path, json=to_plain)
    assert (status, body) == (
        403,
        {"message": "owner_id: only admins or the device's owner may change it"},
    )
    status, _ = await world.call("owner", "PATCH", path, json=to_plain)
    assert status == 200 and world.device("device_member").owner_id == world.id("plain")


async def test_a_device_updates_and_deactivates_itself_but_not_more(world: World) -> None:
    """What a device may do to itself is tested in tests/edge/accounts/test_devices.py;
    here, the statuses, and that a deactivated device's next call is refused."""
    path = f"/v2/devices/{world.id('device_loner')}"
    status, body = await world.call("device_loner", "DELETE", path)
    assert (status, body) == (403, {"message": "Not permitted to delete this device"})
    status, _ = await world.call("device_loner", "PATCH", path, json={"is_active": False})
    assert status == 200 and world.device("device_loner").is_active is False
    status, body = await world.call("device_loner", "GET", path)
    assert (status, body) == (401, {"message": "Device is not active"})


async def test_only_admins_suspend_and_reactivate(world: World) -> None:
    path = f"/v2/devices/{world.id('device_member')}"
    status, body = await world.call("org_device_perms", "PATCH", path, json={"is_active": False})
    assert (status, body) == (
        403,
        {"message": "is_active: only admins may set it (a device may deactivate itself)"},
    )
    status, _ = await world.call("project_admin", "PATCH", path, json={"is_active": False})
    assert status == 200
    status, _ = await world.call("device_member", "GET", path)
    assert status == 401  # a suspended device cannot sign in
    status, body = await world.call("org_admin", "GET", path)
    assert body["device"]["is_active"] is False
    status, _ = await world.call("org_admin", "PATCH", path, json={"is_active": True})
    assert status == 200
    status, _ = await world.call("device_member", "GET", path)
    assert status == 200


async def test_deletion_protection_and_admin_only_force(world: World) -> None:
    path = f"/v2/devices/{world.id('device_member')}"
    status, _ = await world.call("org_admin", "PATCH", path, json={"is_delete_protected": True})
    assert status == 200
    status, body = await world.call("org_device_perms", "DELETE", path)
    assert status == 409 and "delete protected" in body["message"]
    status, body = await world.call("org_device_perms", "DELETE", path + "?force=true")
    assert (status, body) == (403, {"message": "force: only admins may force a delete"})
    status, _ = await world.call("project_admin", "DELETE", path + "?force=true")
    assert status == 200


async def test_delete_goes_to_the_trash_and_credentials_end(world: World) -> None:
    path = f"/v2/devices/{world.id('device_member')}"
    status, _ = await world.call("org_admin", "DELETE", path)  # permanent defaults to false
    assert status == 200
    status, body = await world.call("device_member", "GET", "/v2/devices")
    assert (status, body) == (401, {"message": "Invalid API key"})
    status, body = await world.call("org_admin", "GET", f"/v2/trash/{world.id('device_member')}")
    assert status == 200 and body["trash"]["kind"] == "device"
    assert body["trash"]["name"] == "device_member"
    assert body["trash"]["project_id"] == world.project_id
    status, _ = await world.call(
        "org_admin", "POST", f"/v2/trash/{world.id('device_member')}/restore"
    )
    assert status == 200
    restored = world.device("device_member")
    assert restored.owner_id == world.id("owner") and restored.api_key_hash is None
    status, _ = await world.call("device_member", "GET", "/v2/devices")
    assert status == 401  # the old key stays ended: reset it to use the device again
    status, body = await world.call("org_admin", "GET", path)
    assert body["device"]["group_ids"] == [world.org_group_id]  # its access came back


async def test_permanent_delete_erases(world: World) -> None:
    device_id = world.id("device_loner")
    status, _ = await world.call("org_admin", "DELETE", f"/v2/devices/{device_id}?permanent=true")
    assert status == 200
    status, _ = await world.call("org_admin", "GET", f"/v2/trash/{device_id}")
    assert status == 404


async def test_deleting_a_project_takes_its_devices_and_restores_them(world: World) -> None:
    status, _ = await world.call(
        "org_admin", "DELETE", f"/v2/projects/{world.project_id}?permanent=false"
    )
    assert status == 200
    status, _ = await world.call("org_admin", "GET", f"/v2/devices/{world.id('device_member')}")
    assert status == 404
    status, _ = await world.call("device_boss", "GET", "/v2/devices")
    assert status == 401
    status, _ = await world.call("org_admin", "POST", f"/v2/trash/{world.project_id}/restore")
    assert status == 200
    assert world.device("device_member").project_id == world.project_id


async def test_creators_become_owners_when_the_setting_says_so(world: World) -> None:
    """The rule is tested in tests/edge/accounts/test_devices.py; here, that the org's
    setting changed through /v2/my-org reaches it, and the 403 Status."""
    status, _ = await world.call(
        "org_admin",
        "PATCH",
        "/v2/my-org",
        json={"device_creators_are_owners_by_default": True},
    )
    assert status == 200
    status, reply = await create(world, {"name": "b"}, who="org_device_perms")
    assert status == 201 and reply["device"]["owner_id"] == world.id("org_device_perms")
    body = {"name": "d", "owner_id": world.id("plain")}
    status, reply = await create(world, body, who="org_device_perms")
    assert (status, reply) == (
        403,
        {"message": "owner_id: only admins may make someone else the owner of a device"},
    )


async def test_owners_are_admins_when_the_setting_says_so_project_over_org(
    world: World,
) -> None:
    member, loner = world.id("device_member"), world.id("device_loner")
    status, _ = await world.call("owner", "PATCH", f"/v2/devices/{member}", json=SCOPES)
    assert status == 403
    status, _ = await world.call(
        "org_admin",
        "PATCH",
        f"/v2/projects/{world.project_id}",
        json={"device_owners_have_admin_access": True},
    )
    assert status == 200, "the project sets it for its own devices"
    status, body = await world.call("owner", "PATCH", f"/v2/devices/{member}", json=SCOPES)
    assert status == 200, body
    status, body = await world.call("owner", "GET", f"/v2/devices/{member}")
    assert body["device"]["is_active"] is True  # the admin's view
    status, _ = await world.call("owner", "PATCH", f"/v2/devices/{loner}", json=SCOPES)
    assert status == 403  # an org-level device follows the org's setting (off)
    status, _ = await world.call(
        "owner", "PATCH", f"/v2/devices/{world.id('device_boss')}", json=SCOPES
    )
    assert status == 403  # never an admin of an admin device
    status, _ = await world.call("owner", "DELETE", f"/v2/devices/{member}")
    assert status == 200


async def test_device_permissions_in_a_role_act_like_user_permissions(world: World) -> None:
    role = await world.new_role(name="Sensors")
    await world.grant("role", role, world.id("plain"))
    await world.grant(
        "org", world.tenant.org_id, role, "role", device_permissions={"can_read": True}
    )
    status, body = await world.call("plain", "GET", "/v2/devices")
    assert status == 200 and len(body["devices"]) == len(DEVICES)  # every device of Clinic
    path = f"/v2/devices/{world.id('device_loner')}"
    status, _ = await world.call("plain", "PATCH", path, json={})
    assert status == 403


async def test_project_permissions_are_for_the_projects_admins(world: World) -> None:
    path = f"/v2/devices/{world.id('device_member')}"
    body = {"project_permissions": {"device_permissions": {"can_read": True}}}
    status, reply = await world.call("project_device_perms", "PATCH", path, json=body)
    assert (status, reply) == (
        403,
        {"message": "project_permissions: only admins of the project may set them"},
    )
    status, _ = await world.call("project_admin", "PATCH", path, json=body)
    assert status == 200
    device = (await world.call("org_admin", "GET", path))[1]["device"]
    assert device["project_ids"] == [world.project_id]
    status, reply = await world.call(
        "org_admin", "PATCH", f"/v2/devices/{world.id('device_loner')}", json=body
    )
    assert status == 400 and reply["message"].startswith("project_permissions: the device has")


async def test_devices_are_grantees_of_group_and_role_access(world: World) -> None:
    loner, ward = world.id("device_loner"), world.org_group_id
    role = await world.new_role(name="Sensors")
    status, body = await world.call(
        "org_admin", "POST", f"/v2/groups/{ward}/access/{loner}", json={"can_read": True}
    )
    assert status == 201, body
    status, body = await world.call(
        "org_admin", "POST", f"/v2/roles/{role}/access/{loner}", json={}
    )
    assert status == 201, body
    status, body = await world.call("device_loner", "GET", "/v2/account/access/groups")
    assert status == 200 and [g["group_id"] for g in body["group_access"]] == [ward]
    status, body = await world.call("group_admin", "GET", f"/v2/devices/{loner}")
    assert status == 200 and "role_ids" not in body["device"]  # org-level role read needed
    status, body = await world.call("org_admin", "GET", f"/v2/devices/{loner}")
    assert body["device"]["role_ids"] == [role]
