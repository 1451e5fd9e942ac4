"""edge/accounts/devices.py: the device kind's own rules over the shared flow. Admin-only
fields (`iot_scopes`, restricted attributes, `is_active`; a device may deactivate itself),
the owner (changed by admins or the owner; the creator by default when the setting says),
and its credentials: shown once, replaced by a reset, ended by a delete."""

from __future__ import annotations

import pytest

from edge.kernel.errors import Conflict, Denied, NotFound, ValidationError
from tests.edge.rooms import CRUD, Room

SCOPES = {"telemetry": {"can_publish": True}}


async def test_admin_only_fields_on_create_and_patch(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    maker = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, maker, device_permissions=CRUD)
    devices, as_maker = room.services.devices, room.user(org_id, maker)
    for field, value in (
        ("iot_scopes", SCOPES),
        ("restricted_custom_attributes", {"a": 1}),
        ("is_active", False),
    ):
        with pytest.raises(Denied):
            await devices.create(as_maker, {"name": "pump", field: value})
    with pytest.raises(ValidationError) as refused:
        await devices.create(as_maker, {"manufacturer": "Acme"})
    assert refused.value.field == "name"
    made = await devices.create(admin, {"name": "pump", "iot_scopes": SCOPES})
    assert made["api_key"] and made["certificate"]  # shown this once
    with pytest.raises(Denied):
        await devices.patch(as_maker, made["id"], {"iot_scopes": {}})
    await devices.patch(as_maker, made["id"], {"manufacturer": "Acme"})
    stored = {"/telemetry": {"can_publish": True, "can_subscribe": False}}  # normalized
    assert devices.get(admin, made["id"])["iot_scopes"] == stored


async def test_a_device_may_deactivate_itself_and_nothing_more(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    device_id = await room.add_device(org_id)
    devices, itself = room.services.devices, room.device(org_id, device_id)
    for body in ({"is_active": True}, {"iot_scopes": SCOPES}, {"restricted_custom_attributes": {}}):
        with pytest.raises(Denied):
            await devices.patch(itself, device_id, body)
    with pytest.raises(Denied):
        await devices.delete(itself, device_id, force=False, permanent=False)
    await devices.patch(itself, device_id, {"is_active": False, "site": "Hall 2"})
    shown = devices.get(admin, device_id)
    assert (shown["is_active"], shown["site"]) == (False, "Hall 2")
    await devices.patch(admin, device_id, {"is_active": True})


async def test_the_owner_is_changed_by_admins_or_the_owner(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    ward = await room.group(admin)
    owner, heir = await room.add_user(org_id), await room.add_user(org_id)
    editor, head = await room.add_user(org_id), await room.add_user(org_id)
    group_editor = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, editor, device_permissions=CRUD)
    await room.grant(org_id, "group", ward, head, is_admin=True)
    await room.grant(org_id, "group", ward, group_editor, device_permissions=CRUD)
    device_id = await room.add_device(org_id, owner_id=owner)
    await room.grant(org_id, "group", ward, device_id, "device")
    devices = room.services.devices
    for who in (
        room.user(org_id, editor),
        room.user(org_id, group_editor),
        room.device(org_id, device_id),
    ):
        with pytest.raises(Denied):
            await devices.patch(who, device_id, {"owner_id": heir})
    await devices.patch(room.user(org_id, owner), device_id, {"owner_id": heir})
    assert devices.get(admin, device_id)["owner_id"] == heir
    with pytest.raises(NotFound):  # no longer the owner: out of their sight
        await devices.patch(room.user(org_id, owner), device_id, {"owner_id": owner})
    await devices.patch(room.user(org_id, head), device_id, {"owner_id": None})  # a group admin
    assert "owner_id" not in devices.get(admin, device_id)
    with pytest.raises(ValidationError):
        await devices.patch(admin, device_id, {"owner_id": "nobody"})


@pytest.mark.parametrize("creators_are_owners", [False, True])
async def test_the_creator_owns_a_new_device_when_the_setting_says(
    room: Room, creators_are_owners: bool
) -> None:
    org_id = await room.org(device_creators_are_owners_by_default=creators_are_owners)
    admin = await room.admin(org_id)
    maker, plain = await room.add_user(org_id), await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, maker, device_permissions=CRUD)
    devices, as_maker = room.services.devices, room.user(org_id, maker)
    made = await devices.create(as_maker, {"name": "pump"})
    assert (made.get("owner_id") == maker) is creators_are_owners
    given = await devices.create(as_maker, {"name": "valve", "owner_id": None})
    assert "owner_id" not in given  # an owner given (none) wins over the setting
    with pytest.raises(Denied):
        await devices.create(as_maker, {"name": "tank", "owner_id": plain})
    made = await devices.create(admin, {"name": "tank", "owner_id": plain})  # admins may
    assert made["owner_id"] == plain


async def test_a_reset_key_replaces_the_old_one_at_once(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    devices, directory = room.services.devices, room.services.device_directory
    made = await devices.create(admin, {"name": "pump"})
    device_id, old = made["id"], made["api_key"]
    assert directory.by_api_key(device_id, old) is not None
    new = (await devices.reset_api_key(admin, device_id))["api_key"]
    assert directory.by_api_key(device_id, old) is None
    assert directory.by_api_key(device_id, new) is not None
    reader = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, reader, device_permissions={"can_read": True})
    with pytest.raises(Denied):
        await devices.reset_api_key(room.user(org_id, reader), device_id)
    await devices.delete(admin, device_id, force=False, permanent=False)
    assert directory.by_api_key(device_id, new) is None


async def test_the_operator_resets_only_an_active_devices_certificate(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    devices = room.services.devices
    device_id = (await devices.create(admin, {"name": "pump"}))["id"]
    _, issued = await devices.operator_reset_mqtt_credentials(device_id)
    assert issued["certificate"]
    await devices.patch(admin, device_id, {"is_active": False})
    with pytest.raises(Conflict):
        await devices.operator_reset_mqtt_credentials(device_id)
    events = [(e.action, e.actor_kind) for e in await room.events(org_id)]
    assert ("device_certificate_reset", "operator") in events
