"""edge/tenancy/my_org.py: every member reads their own organization; org admins change
only the settings an organization runs itself by, never the staff-only ones."""

from __future__ import annotations

import pytest

from edge.kernel.errors import Denied, ValidationError
from edge.kernel.principal import Principal
from tests.edge.rooms import Room


async def test_every_member_reads_it_and_only_org_admins_patch(room: Room) -> None:
    org_id = await room.org()
    member = room.user(org_id, await room.add_user(org_id))
    my_org = room.services.my_org
    assert my_org.get(member)["id"] == org_id
    with pytest.raises(Denied):
        await my_org.patch(member, {"mfa_required": True})
    await my_org.patch(await room.admin(org_id), {"mfa_required": True, "name": "Renamed"})
    shown = my_org.get(member)
    assert (shown["mfa_required"], shown["name"]) == (True, "Renamed")


async def test_staff_only_settings_stay_as_they_were(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    staff_only = {
        "max_roles_per_user": 1,
        "allowed_login_fields": ["email"],
        "use_legacy_data_and_files_permissions": True,
        "is_active": False,
    }
    await room.services.my_org.patch(admin, {**staff_only, "pii_admin_only": True})
    shown = room.services.my_org.get(admin)
    assert shown["pii_admin_only"] is True
    assert shown["max_roles_per_user"] == 20
    assert shown["allowed_login_fields"] == ["username", "email", "phone_number"]
    assert shown["use_legacy_data_and_files_permissions"] is False
    assert shown["is_active"] is True


async def test_a_bad_value_is_refused_and_nothing_changes(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    with pytest.raises(ValidationError) as refused:
        await room.services.my_org.patch(admin, {"name": "Renamed", "session_expire_mins": 1})
    assert refused.value.field == "session_expire_mins"
    assert room.services.my_org.get(admin)["name"] == "Clinic"


async def test_staff_need_a_scope_and_then_act_as_org_admins(room: Room) -> None:
    org_id = await room.org()
    with pytest.raises(Denied):
        room.services.my_org.get(Principal("staff", room.staff().account_id, None))
    await room.services.my_org.patch(room.staff(org_id), {"device_owners_can_tunnel": True})
    assert room.services.my_org.get(room.staff(org_id))["device_owners_can_tunnel"] is True
