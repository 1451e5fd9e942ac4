"""edge/accounts/device_kind.py: what devices have that users do not. A name unique in an
org, an owner who must be a user of the org (named by a non-admin only as themselves), its
open tunnels shown only to its admins, its owner and itself, and everything beyond the
anonymous fields hidden when the org hides device details."""

from __future__ import annotations

import pytest

from edge.accounts import device_kind
from edge.accounts.device_kind import DEVICE, NameTaken
from edge.accounts.kind import Relation
from edge.kernel.errors import Denied, ValidationError
from tests.edge.rooms import Room

PLAIN = Relation(False, False, False, True, False, False)
OWNER = Relation(False, True, False, True, False, False)
SELF = Relation(True, False, False, True, True, False)
ADMIN = Relation(False, False, True, True, True, True)
TUNNELS = {"tunnels": [{"id": "t1"}]}


def test_open_tunnels_only_for_its_admins_its_owner_and_itself() -> None:
    row = device_kind.new_device("org", "actor", {"name": "pump", "api_key_hash": "h"})
    for rel in (OWNER, SELF, ADMIN):
        assert DEVICE.fields(row, rel, TUNNELS)["open_tunnels"] == [{"id": "t1"}]
    assert DEVICE.fields(row, PLAIN, TUNNELS)["open_tunnels"] == []
    assert "is_active" in DEVICE.fields(row, ADMIN, {})
    assert "is_active" not in DEVICE.fields(row, OWNER, {})


def test_a_new_devices_credentials_count_as_issued_when_it_is_made() -> None:
    row = device_kind.new_device("org", "actor", {"name": "Pump", "api_key_hash": "h"})
    assert row.api_key_last_changed == row.mqtt_credentials_last_changed == row.created_date
    assert (row.name_folded, row.owner_id, row.iot_scopes) == ("pump", None, {})


def test_everything_beyond_the_anonymous_fields_is_hidden() -> None:
    names = {"name", "id", "serial_number", "owner_id", "custom_attributes.site"}
    assert DEVICE.hidden(names) == ["custom_attributes.site", "owner_id", "serial_number"]


def test_a_non_admin_names_only_themselves_as_owner() -> None:
    device_kind.owner_on_create("me", "user", None, admin=False)
    device_kind.owner_on_create("me", "user", "me", admin=False)
    device_kind.owner_on_create("me", "user", "someone", admin=True)
    with pytest.raises(Denied):
        device_kind.owner_on_create("me", "user", "someone", admin=False)
    with pytest.raises(Denied):
        device_kind.owner_on_create("dev", "device", "dev", admin=False)  # devices own nothing


async def test_the_owner_is_a_user_of_the_org(room: Room) -> None:
    org_id, other = await room.org(), await room.org("Other")
    mine, theirs = await room.add_user(org_id), await room.add_user(other)
    device_id = await room.add_device(org_id)
    db = room.services.db
    assert db.read(lambda c: device_kind.check_owner(c, org_id, mine)) == mine
    assert db.read(lambda c: device_kind.check_owner(c, org_id, None)) is None
    for bad in (theirs, device_id, 7):
        with pytest.raises(ValidationError) as refused:
            db.read(lambda c, bad=bad: device_kind.check_owner(c, org_id, bad))
        assert refused.value.field == "owner_id"


async def test_names_are_unique_in_an_org_whatever_their_case(room: Room) -> None:
    org_id, other = await room.org(), await room.org("Other")
    admin = await room.admin(org_id)
    devices = room.services.devices
    pump = (await devices.create(admin, {"name": "Pump"}))["id"]
    with pytest.raises(NameTaken):
        await devices.create(admin, {"name": "PUMP"})
    valve = (await devices.create(admin, {"name": "Valve"}))["id"]
    with pytest.raises(NameTaken):
        await devices.patch(admin, valve, {"name": "pump"})
    await devices.patch(admin, pump, {"name": "pump"})  # itself
    await room.services.devices.create(await room.admin(other), {"name": "Pump"})
