"""Devices: who may do what (role-by-role tables, denials next to grants, the device itself
among the callers), what each caller sees, value rules, and the rules of the spec: only
admins set `iot_scopes`, only admins or the owner change the owner, a device updates and
deactivates itself, deletion protection and `force`, suspension, and the settings
`device_creators_are_owners_by_default` and `device_owners_have_admin_access`.
"""

from __future__ import annotations

from typing import Any

import pytest

from edge.app import Site
from storage import devices as device_store
from tests.api.device_world import CALLERS, DeviceWorld, build
from tests.conftest import Api

DENIED_EVERYWHERE = {
    "anonymous": 401,
    "staff_unscoped": 403,
    "other_admin": 404,
    "plain": 404,
    "other_device": 404,
}
OUT_OF_REACH = {"project_admin": 404, "group_admin": 404, "project_block": 404, "group_block": 404}
NON_ADMINS = ("project_admin", "group_admin", "org_block", "project_block", "group_block")


@pytest.fixture
async def world(site: Site, api: Api) -> DeviceWorld:
    return await build(site, api)


def expect(table: dict[str, int], who: str) -> int:
    return {**DENIED_EVERYWHERE, **table}.get(who, 200)


# Expected status per caller and target; callers not named get 200.
READ = {"member": {}, "loner": OUT_OF_REACH, "boss": {}}
UPDATE = {
    "member": {"owner": 403},
    "loner": {**OUT_OF_REACH, "owner": 403},
    "boss": {**dict.fromkeys(NON_ADMINS, 403), "owner": 403},
}
# A device may not delete itself, unless it is an org admin (who may do anything).
DELETE = {t: {**table, "itself": 403 if t != "boss" else 200} for t, table in UPDATE.items()}


@pytest.mark.parametrize("target", ["member", "loner", "boss"])
@pytest.mark.parametrize("who", CALLERS)
async def test_get_device_by_role(world: DeviceWorld, who: str, target: str) -> None:
    status, body = await world.as_(who, target, "GET", f"/v2/devices/{world.devices[target]}")
    assert status == expect(READ[target], who), body
    if status == 200:
        assert body["device"]["id"] == world.devices[target]
        assert body["device"]["name"] == target


@pytest.mark.parametrize("target", ["member", "loner", "boss"])
@pytest.mark.parametrize("who", CALLERS)
async def test_patch_device_by_role(world: DeviceWorld, who: str, target: str) -> None:
    path = f"/v2/devices/{world.devices[target]}"
    status, body = await world.as_(who, target, "PATCH", path, json={"site": "Lab 4"})
    assert status == expect(UPDATE[target], who), body
    assert world.device(target).site == ("Lab 4" if status == 200 else None)


@pytest.mark.parametrize("target", ["member", "loner", "boss"])
@pytest.mark.parametrize("who", CALLERS)
async def test_delete_device_by_role(world: DeviceWorld, who: str, target: str) -> None:
    device_id = world.devices[target]
    status, body = await world.as_(who, target, "DELETE", f"/v2/devices/{device_id}")
    assert status == expect(DELETE[target], who), body
    row = world.site.services.db.read(lambda c: device_store.get(c, device_id))
    assert (row is None) == (status == 200)


@pytest.mark.parametrize("target", ["member", "loner", "boss"])
@pytest.mark.parametrize("who", CALLERS)
async def test_reset_api_key_by_role(world: DeviceWorld, who: str, target: str) -> None:
    before = world.device(target).api_key_hash
    path = f"/v2/devices/{world.devices[target]}/reset-api-key"
    status, body = await world.as_(who, target, "POST", path)
    assert status == expect(UPDATE[target], who), body
    if status == 200:
        assert set(body) == {"api_key"} and body["api_key"].startswith("edk_")
    assert (world.device(target).api_key_hash != before) == (status == 200)


@pytest.mark.parametrize("target", ["member", "boss"])
@pytest.mark.parametrize("who", CALLERS)
async def test_reset_mqtt_credentials_by_role(world: DeviceWorld, who: str, target: str) -> None:
    path = f"/v2/devices/{world.devices[target]}/reset-mqtt-credentials"
    status, body = await world.as_(who, target, "POST", path)
    assert status == expect(UPDATE[target], who), body
    if status == 200:
        wanted = {"certificate", "root_ca", "public_key", "private_key", "broker", "root_scope"}
        assert set(body) == wanted
        assert body["root_scope"] == f"{world.tenant.org_id}/{world.project_id}"


CREATE = {"staff": 201, "org_admin": 201, "org_block": 201, "other_admin": 201}
CREATE_IN_PROJECT = {**CREATE, "project_admin": 201, "project_block": 201, "other_admin": 400}


@pytest.mark.parametrize("in_project", [False, True], ids=["org-level", "in-project"])
@pytest.mark.parametrize("who", CALLERS)
async def test_create_device_by_role(world: DeviceWorld, who: str, in_project: bool) -> None:
    body: dict[str, Any] = {"name": "New sensor"}
    if in_project:
        body["project_id"] = world.project_id
    status, reply = await world.as_(who, "member", "POST", "/v2/devices", json=body)
    table = CREATE_IN_PROJECT if in_project else CREATE
    assert status == table.get(who, {"anonymous": 401}.get(who, 403)), reply
    if status == 201:
        row = world.site.services.db.read(lambda c: device_store.get(c, reply["device"]["id"]))
        assert row is not None and row.name == "New sensor"
        assert row.project_id == (world.project_id if in_project else None)
        org = world.other.org_id if who == "other_admin" else world.tenant.org_id
        assert row.org_id == org


LISTED = {
    "staff": {"member", "loner", "boss"},
    "org_admin": {"member", "loner", "boss"},
    "org_block": {"member", "loner", "boss"},
    "project_admin": {"member", "boss"},
    "project_block": {"member", "boss"},
    "group_admin": {"member", "boss"},
    "group_block": {"member", "boss"},
    "owner": {"member", "loner", "boss"},
    "plain": set(),
    "other_admin": set(),
    "itself": {"member"},
    "other_device": set(),
}


@pytest.mark.parametrize("who", CALLERS)
async def test_list_devices_by_role(world: DeviceWorld, who: str) -> None:
    status, body = await world.as_(who, "member", "GET", "/v2/devices")
    assert status == {"anonymous": 401, "staff_unscoped": 403}.get(who, 200), body
    if status != 200:
        return
    seen = {d["id"] for d in body["devices"]}
    targets = {world.devices[t] for t in ("member", "loner", "boss")}
    assert seen & targets == {world.devices[t] for t in LISTED[who]}
    if who == "other_device":
        assert seen == {world.devices["bystander"]}  # a device sees itself


# -- what each caller sees -------------------------------------------------------------------
async def get_device(world: DeviceWorld, who: str, target: str) -> dict[str, Any]:
    status, body = await world.as_(who, target, "GET", f"/v2/devices/{world.devices[target]}")
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


async def test_admins_see_is_active_and_holdings(world: DeviceWorld) -> None:
    await world.tenant.grant("role", world.role_id, world.devices["member"], "device")
    device = await get_device(world, "org_admin", "member")
    assert PLAIN_REQUIRED <= set(device) and device["is_active"] is True
    assert device["open_tunnels"] == [] and device["iot_scopes"] == {}
    assert device["group_ids"] == [world.group_id] and device["role_ids"] == [world.role_id]
    assert device["project_ids"] == [] and device["project_id"] == world.project_id
    assert device["owner_id"] == world.id("owner")
    assert device["org_permissions"]["is_admin"] is False


async def test_readers_get_the_plain_view_without_is_active(world: DeviceWorld) -> None:
    for who in ("org_block", "owner", "itself"):
        device = await get_device(world, who, "member")
        assert PLAIN_REQUIRED <= set(device) and "is_active" not in device, who
        assert device["open_tunnels"] == []
    assert "org_permissions" not in await get_device(world, "org_block", "member")
    itself = await get_device(world, "itself", "member")
    assert itself["org_permissions"]["device_permissions"]["can_read"] is False
    assert itself["group_ids"] == [world.group_id]  # a device sees its own holdings


async def test_pii_admin_only_shows_anonymous_devices_to_non_admins(world: DeviceWorld) -> None:
    status, _ = await world.call("org_admin", "PATCH", "/v2/my-org", json={"pii_admin_only": True})
    assert status == 200
    device = await get_device(world, "org_block", "member")
    assert device == {
        "id": world.devices["member"],
        "username": "member",
        "created_date": device["created_date"],
        "last_updated_date": device["last_updated_date"],
        "is_delete_protected": False,
    }
    assert "open_tunnels" in await get_device(world, "org_admin", "member")
    assert "open_tunnels" in await get_device(world, "itself", "member")
    assert "open_tunnels" in await get_device(world, "owner", "member")
    status, body = await world.call("org_block", "GET", "/v2/devices?site=Lab")
    assert (status, body) == (
        403,
        {"message": "site: only admins may search device details in this org"},
    )
    status, _ = await world.call("org_block", "GET", "/v2/devices?name=member")
    assert status == 200


# -- create ----------------------------------------------------------------------------------
async def create(world: DeviceWorld, body: dict[str, Any], who: str = "org_admin") -> Any:
    return await world.as_(who, "member", "POST", "/v2/devices", json=body)


async def test_create_returns_the_credentials_once(world: DeviceWorld) -> None:
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


async def test_create_with_every_field(world: DeviceWorld) -> None:
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
    world: DeviceWorld, body: dict[str, Any], status: int, message: str
) -> None:
    assert await create(world, body) == (status, {"message": message})


async def test_names_are_unique_in_an_org_without_case(world: DeviceWorld) -> None:
    status, reply = await create(world, {"name": "MEMBER"})
    assert (status, reply) == (
        409,
        {"message": "name: is already used by another device of this organization"},
    )
    path = f"/v2/devices/{world.devices['loner']}"
    status, _ = await world.call("org_admin", "PATCH", path, json={"name": "Member"})
    assert status == 409
    status, _ = await world.call("org_admin", "PATCH", path, json={"name": "LONER"})
    assert status == 200  # its own name in another case
    status, _ = await world.call("other_admin", "POST", "/v2/devices", json={"name": "member"})
    assert status == 201  # unique within an organization only


@pytest.mark.parametrize("name", ["iot_scopes", "restricted_custom_attributes", "is_active"])
async def test_admin_only_fields_on_create(world: DeviceWorld, name: str) -> None:
    value: Any = {} if name != "is_active" else False
    status, reply = await create(world, {"name": "n", name: value}, who="org_block")
    assert (status, reply) == (403, {"message": f"{name}: only admins may set it"})
    status, _ = await create(world, {"name": "n", name: value})
    assert status == 201


# -- rules of the spec -----------------------------------------------------------------------
SCOPES = {"iot_scopes": {"alarms": {"can_subscribe": True}}}


@pytest.mark.parametrize("who", ["org_admin", "project_admin", "group_admin", "staff"])
async def test_admins_set_iot_scopes_with_a_leading_slash(world: DeviceWorld, who: str) -> None:
    path = f"/v2/devices/{world.devices['member']}"
    status, body = await world.call(who, "PATCH", path, json=SCOPES)
    assert status == 200, body
    assert world.device("member").iot_scopes == {
        "/alarms": {"can_publish": False, "can_subscribe": True}
    }


@pytest.mark.parametrize("who", ["org_block", "project_block", "group_block", "itself", "owner"])
async def test_non_admins_may_not_set_iot_scopes(world: DeviceWorld, who: str) -> None:
    path = f"/v2/devices/{world.devices['member']}"
    status, body = await world.as_(who, "member", "PATCH", path, json=SCOPES)
    expected = "iot_scopes: only admins may set it"
    if who == "owner":
        expected = "Not permitted to update this device"
    assert (status, body) == (403, {"message": expected})
    assert world.device("member").iot_scopes == {}


async def test_only_admins_or_the_owner_change_the_owner(world: DeviceWorld) -> None:
    path = f"/v2/devices/{world.devices['member']}"
    to_plain = {"owner_id": world.id("plain")}
    for who in ("org_block", "group_block", "itself"):
        status, body = await world.as_(who, "member", "PATCH", path, json=to_plain)
        assert (status, body) == (
            403,
            {"message": "owner_id: only admins or the device's owner may change it"},
        ), who
    status, _ = await world.call("owner", "PATCH", path, json=to_plain)
    assert status == 200 and world.device("member").owner_id == world.id("plain")
    status, _ = await world.call("owner", "PATCH", path, json={"owner_id": world.id("owner")})
    assert status == 404  # no longer the owner: the device is out of their sight
    status, _ = await world.call("group_admin", "PATCH", path, json={"owner_id": None})
    assert status == 200 and world.device("member").owner_id is None


async def test_a_device_updates_and_deactivates_itself_but_not_more(world: DeviceWorld) -> None:
    path = f"/v2/devices/{world.devices['loner']}"
    status, _ = await world.as_("itself", "loner", "PATCH", path, json={"product": "v2"})
    assert status == 200 and world.device("loner").product == "v2"
    status, body = await world.as_(
        "itself", "loner", "PATCH", path, json={"restricted_custom_attributes": {"a": 1}}
    )
    assert (status, body) == (
        403,
        {"message": "restricted_custom_attributes: only admins may set it"},
    )
    status, body = await world.as_("itself", "loner", "DELETE", path)
    assert (status, body) == (403, {"message": "Not permitted to delete this device"})
    status, _ = await world.as_("itself", "loner", "PATCH", path, json={"is_active": False})
    assert status == 200 and world.device("loner").is_active is False
    status, body = await world.as_("itself", "loner", "GET", path)
    assert (status, body) == (401, {"message": "Device is not active"})


async def test_only_admins_suspend_and_reactivate(world: DeviceWorld) -> None:
    path = f"/v2/devices/{world.devices['member']}"
    status, body = await world.call("org_block", "PATCH", path, json={"is_active": False})
    assert (status, body) == (
        403,
        {"message": "is_active: only admins may set it (a device may deactivate itself)"},
    )
    status, _ = await world.call("project_admin", "PATCH", path, json={"is_active": False})
    assert status == 200
    status, _ = await world.as_("itself", "member", "GET", path)
    assert status == 401  # a suspended device cannot sign in
    status, body = await world.call("org_admin", "GET", path)
    assert body["device"]["is_active"] is False
    status, _ = await world.call("org_admin", "PATCH", path, json={"is_active": True})
    assert status == 200
    status, _ = await world.as_("itself", "member", "GET", path)
    assert status == 200


async def test_deletion_protection_and_admin_only_force(world: DeviceWorld) -> None:
    path = f"/v2/devices/{world.devices['member']}"
    status, _ = await world.call("org_admin", "PATCH", path, json={"is_delete_protected": True})
    assert status == 200
    status, body = await world.call("org_block", "DELETE", path)
    assert status == 409 and "delete protected" in body["message"]
    status, body = await world.call("org_block", "DELETE", path + "?force=true")
    assert (status, body) == (403, {"message": "force: only admins may force a delete"})
    status, _ = await world.call("project_admin", "DELETE", path + "?force=true")
    assert status == 200


async def test_delete_goes_to_the_trash_and_credentials_end(world: DeviceWorld) -> None:
    path = f"/v2/devices/{world.devices['member']}"
    status, _ = await world.call("org_admin", "DELETE", path)  # permanent defaults to false
    assert status == 200
    status, body = await world.as_("itself", "member", "GET", "/v2/devices")
    assert (status, body) == (401, {"message": "Invalid API key"})
    status, body = await world.call("org_admin", "GET", f"/v2/trash/{world.devices['member']}")
    assert status == 200 and body["trash"]["kind"] == "device"
    assert body["trash"]["name"] == "member" and body["trash"]["project_id"] == world.project_id
    status, _ = await world.call(
        "org_admin", "POST", f"/v2/trash/{world.devices['member']}/restore"
    )
    assert status == 200
    restored = world.device("member")
    assert restored.owner_id == world.id("owner") and restored.api_key_hash is None
    status, _ = await world.as_("itself", "member", "GET", "/v2/devices")
    assert status == 401  # the old key stays ended: reset it to use the device again
    status, body = await world.call("org_admin", "GET", path)
    assert body["device"]["group_ids"] == [world.group_id]  # its access came back


async def test_permanent_delete_erases(world: DeviceWorld) -> None:
    device_id = world.devices["loner"]
    status, _ = await world.call("org_admin", "DELETE", f"/v2/devices/{device_id}?permanent=true")
    assert status == 200
    status, _ = await world.call("org_admin", "GET", f"/v2/trash/{device_id}")
    assert status == 404


async def test_deleting_a_project_takes_its_devices_and_restores_them(world: DeviceWorld) -> None:
    status, _ = await world.call(
        "org_admin", "DELETE", f"/v2/projects/{world.project_id}?permanent=false"
    )
    assert status == 200
    status, _ = await world.call("org_admin", "GET", f"/v2/devices/{world.devices['member']}")
    assert status == 404
    status, _ = await world.as_("itself", "boss", "GET", "/v2/devices")
    assert status == 401
    status, _ = await world.call("org_admin", "POST", f"/v2/trash/{world.project_id}/restore")
    assert status == 200
    assert world.device("member").project_id == world.project_id


async def test_creators_become_owners_when_the_setting_says_so(world: DeviceWorld) -> None:
    status, reply = await create(world, {"name": "a"}, who="org_block")
    assert status == 201 and "owner_id" not in reply["device"]
    status, _ = await world.call(
        "org_admin",
        "PATCH",
        "/v2/my-org",
        json={"device_creators_are_owners_by_default": True},
    )
    assert status == 200
    status, reply = await create(world, {"name": "b"}, who="org_block")
    assert status == 201 and reply["device"]["owner_id"] == world.id("org_block")
    status, reply = await create(world, {"name": "c", "owner_id": None}, who="org_block")
    assert status == 201 and "owner_id" not in reply["device"]
    status, reply = await create(world, {"name": "d", "owner_id": world.id("plain")}, "org_block")
    assert (status, reply) == (
        403,
        {"message": "owner_id: only admins may make someone else the owner of a device"},
    )


async def test_owners_are_admins_when_the_setting_says_so_project_over_org(
    world: DeviceWorld,
) -> None:
    member, loner = world.devices["member"], world.devices["loner"]
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
        "owner", "PATCH", f"/v2/devices/{world.devices['boss']}", json=SCOPES
    )
    assert status == 403  # never an admin of an admin device
    status, _ = await world.call("owner", "DELETE", f"/v2/devices/{member}")
    assert status == 200


async def test_device_permissions_in_a_role_act_like_user_permissions(world: DeviceWorld) -> None:
    plain = world.id("plain")
    await world.tenant.grant("role", world.role_id, plain)
    await world.tenant.grant(
        "org", world.tenant.org_id, world.role_id, "role", device_permissions={"can_read": True}
    )
    status, body = await world.call("plain", "GET", "/v2/devices")
    assert status == 200 and len(body["devices"]) == 4
    status, _ = await world.call("plain", "PATCH", f"/v2/devices/{world.devices['loner']}", json={})
    assert status == 403


async def test_project_permissions_are_for_the_projects_admins(world: DeviceWorld) -> None:
    path = f"/v2/devices/{world.devices['member']}"
    body = {"project_permissions": {"device_permissions": {"can_read": True}}}
    status, reply = await world.call("project_block", "PATCH", path, json=body)
    assert (status, reply) == (
        403,
        {"message": "project_permissions: only admins of the project may set them"},
    )
    status, _ = await world.call("project_admin", "PATCH", path, json=body)
    assert status == 200
    device = (await world.call("org_admin", "GET", path))[1]["device"]
    assert device["project_ids"] == [world.project_id]
    status, reply = await world.call(
        "org_admin", "PATCH", f"/v2/devices/{world.devices['loner']}", json=body
    )
    assert status == 400 and reply["message"].startswith("project_permissions: the device has")


async def test_devices_are_grantees_of_group_and_role_access(world: DeviceWorld) -> None:
    loner = world.devices["loner"]
    status, body = await world.call(
        "org_admin", "POST", f"/v2/groups/{world.group_id}/access/{loner}", json={"can_read": True}
    )
    assert status == 201, body
    status, body = await world.call(
        "org_admin", "POST", f"/v2/roles/{world.role_id}/access/{loner}", json={}
    )
    assert status == 201, body
    status, body = await world.as_("itself", "loner", "GET", "/v2/account/access/groups")
    assert status == 200 and [g["group_id"] for g in body["group_access"]] == [world.group_id]
    status, body = await world.call("group_admin", "GET", f"/v2/devices/{loner}")
    assert status == 200 and "role_ids" not in body["device"]  # org-level role read needed
    status, body = await world.call("org_admin", "GET", f"/v2/devices/{loner}")
    assert body["device"]["role_ids"] == [world.role_id]
