"""edge/accounts/views.py: what one caller sees of an account. The anonymous view when the
org hides personal information from non-admins; the admin's view with the admin-only
fields; the standing fields of the project or group asked about; holdings only to those who
may view them, and the lists of projects and groups only on a single GET."""

from __future__ import annotations

from edge.accounts.lists import Filters
from edge.kernel.listing import ListQuery
from tests.edge.rooms import Room

READ = {"can_read": True}
ANONYMOUS = {"id", "username", "created_date", "last_updated_date", "is_delete_protected"}


async def test_personal_information_hidden_from_non_admins(room: Room) -> None:
    org_id = await room.org(pii_admin_only=True)
    admin = await room.admin(org_id)
    reader = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, reader, user_permissions=READ, device_permissions=READ)
    target = await room.add_user(org_id, first_name="Ada")
    users = room.services.users
    assert set(users.get(room.user(org_id, reader), target)) == ANONYMOUS
    assert users.get(room.user(org_id, target), target)["first_name"] == "Ada"  # themselves
    assert users.get(admin, target)["first_name"] == "Ada"
    device_id = await room.add_device(org_id, name="pump")
    shown = room.services.devices.get(room.user(org_id, reader), device_id)
    assert shown == {**{k: shown[k] for k in ANONYMOUS}, "username": "pump"}


async def test_a_devices_owner_sees_it_whole_where_details_are_hidden(room: Room) -> None:
    org_id = await room.org(pii_admin_only=True)
    owner = await room.add_user(org_id)
    device_id = await room.add_device(org_id, owner_id=owner, serial_number="SN-1")
    shown = room.services.devices.get(room.user(org_id, owner), device_id)
    assert (shown["serial_number"], shown["owner_id"]) == ("SN-1", owner)


async def test_the_admins_view_adds_the_admin_only_fields(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    reader = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, reader, user_permissions=READ, device_permissions=READ)
    target = await room.add_user(org_id)
    users, devices = room.services.users, room.services.devices
    for name in ("is_active", "has_temporary_password", "new_password_required"):
        assert name in users.get(admin, target)
        assert name not in users.get(room.user(org_id, reader), target)
    assert "org_permissions" in users.get(admin, target)
    assert "org_permissions" not in users.get(room.user(org_id, reader), target)
    assert "org_permissions" in users.get(room.user(org_id, target), target)
    device_id = await room.add_device(org_id)
    assert "is_active" in devices.get(admin, device_id)
    assert "is_active" not in devices.get(room.user(org_id, reader), device_id)


async def test_a_project_view_tells_project_admin_status(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    target = await room.add_user(org_id)
    await room.grant(org_id, "project", project_id, target, is_admin=True)
    shown = room.services.users.get(room.user(org_id, admin.account_id, project_id), target)
    assert shown["is_project_admin"] is True and shown["project_permissions"]["is_admin"]
    assert "is_project_admin" not in room.services.users.get(admin, target)


async def test_a_group_view_tells_group_admin_status(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    ward = await room.group(admin)
    head, member = await room.add_user(org_id), await room.add_user(org_id)
    await room.grant(org_id, "group", ward, head, is_admin=True)
    await room.grant(org_id, "group", ward, member)
    page = await room.services.users.list(admin, ListQuery(), Filters(group_id=ward))
    assert {u["id"]: u["is_group_admin"] for u in page.rows} == {head: True, member: False}
    assert "group_ids" not in page.rows[0]  # a list: no holdings lists


async def test_holdings_only_to_those_who_may_view_them(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    ward, nurses = await room.group(admin), await room.role(admin)
    target = await room.add_user(org_id)
    await room.grant(org_id, "group", ward, target)
    await room.grant(org_id, "role", nurses, target)
    reader = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, reader, user_permissions={"can_read": True})
    users = room.services.users
    seen = users.get(admin, target)
    assert (seen["group_ids"], seen["role_ids"], seen["project_ids"]) == ([ward], [nurses], [])
    hidden = users.get(room.user(org_id, reader), target)
    assert not {"group_ids", "role_ids", "project_ids"} & set(hidden)
    own = users.get(room.user(org_id, target), target)
    assert own["group_ids"] == [ward] and own["role_ids"] == [nurses]


async def test_unset_values_are_left_out(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    shown = room.services.users.get(admin, await room.add_user(org_id))
    for name in ("phone_number", "first_name", "project_id", "last_seen", "picture_base64"):
        assert name not in shown
    assert shown["mfa_enabled"] is False and shown["locale"] == "en-US"
