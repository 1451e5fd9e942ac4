"""edge/accounts/users.py: the user kind's own rules over the shared flow. Admin-only fields
on create and patch, an invitation for a temporary password, a phone number that SMS MFA
uses kept until MFA is off, sessions ended by suspension or a lost admin status, a GET that
follows every change, and who may act as an admin over a user."""

from __future__ import annotations

import pytest

from edge.kernel.errors import Denied, NotFound, ValidationError
from storage import outbox
from storage import users as user_store
from tests.edge.rooms import CRUD, Room

PASSWORD = "a-long-enough-password-1"


async def test_admin_only_fields_on_create_and_patch(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    manager = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, manager, user_permissions=CRUD)
    users, as_manager = room.services.users, room.user(org_id, manager)
    base = {"email": "a@x.test", "password": PASSWORD}
    for field, value in (("restricted_custom_attributes", {"tier": 1}), ("is_active", False)):
        with pytest.raises(Denied):
            await users.create(as_manager, {**base, field: value})
    made = await users.create(as_manager, base)
    with pytest.raises(Denied):
        await users.patch(as_manager, made, {"restricted_custom_attributes": {"tier": 1}})
    await users.patch(as_manager, made, {"custom_attributes": {"tier": 1}})
    await users.patch(admin, made, {"restricted_custom_attributes": {"tier": 2}})
    shown = users.get(admin, made)
    assert shown["custom_attributes"] == {"tier": 1}
    assert shown["restricted_custom_attributes"] == {"tier": 2}


async def test_a_temporary_password_is_mailed_a_permanent_one_is_not(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    users = room.services.users

    def pending() -> int:
        return room.services.db.read(outbox.backlog)["pending"]

    await users.create(admin, {"email": "a@x.test", "password": PASSWORD})
    assert pending() == 0
    made = await users.create(admin, {"email": "b@x.test"})  # a generated one
    assert pending() == 1
    shown = users.get(admin, made)
    assert shown["has_temporary_password"] and shown["new_password_required"]


async def test_the_phone_number_sms_mfa_uses_stays_until_mfa_is_off(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    user_id = await room.add_user(org_id)
    users = room.services.users
    await users.patch(admin, user_id, {"phone_number": "+15550102000"})
    await room.services.db.write(
        lambda c: user_store.patch(
            c, user_id, {"phone_number_verified": True, "sms_mfa_enabled": True}
        )
    )
    with pytest.raises(ValidationError) as refused:
        await users.patch(admin, user_id, {"phone_number": "+15550102001"})
    assert refused.value.field == "phone_number"
    await users.patch(admin, user_id, {"phone_number": "+1 555 010 2000"})  # the same number
    await room.services.db.write(lambda c: user_store.patch(c, user_id, {"sms_mfa_enabled": False}))
    await users.patch(admin, user_id, {"phone_number": "+15550102001"})
    shown = users.get(admin, user_id)
    assert (shown["phone_number"], shown["phone_number_verified"]) == ("+15550102001", False)


async def test_suspension_and_a_lost_admin_status_end_sessions(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    users = room.services.users
    boss = await room.admin(org_id)
    member = room.user(org_id, await room.add_user(org_id))
    boss_token, member_token = await room.session(boss), await room.session(member)
    await users.patch(admin, member.account_id, {"nickname": "Bo"})
    await users.patch(admin, boss.account_id, {"org_permissions": {"can_read": True}})
    assert room.signed_in(boss_token) and room.signed_in(member_token)  # still admins
    await users.patch(admin, boss.account_id, {"org_permissions": {"is_admin": False}})
    assert not room.signed_in(boss_token)
    held = users.get(admin, boss.account_id)["org_permissions"]
    assert (held["is_admin"], held["can_read"]) == (False, True)  # merged, not replaced
    await users.patch(admin, member.account_id, {"is_active": False})
    assert not room.signed_in(member_token)
    assert users.get(admin, member.account_id)["is_active"] is False


async def test_a_get_follows_every_change(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    user_id = await room.add_user(org_id)
    users = room.services.users
    assert "nickname" not in users.get(admin, user_id)
    await users.patch(admin, user_id, {"nickname": "Bo"})
    assert users.get(admin, user_id)["nickname"] == "Bo"
    ward = await room.group(admin)
    await room.grant(org_id, "group", ward, user_id)
    assert users.get(admin, user_id)["group_ids"] == [ward]


async def test_who_acts_as_an_admin_over_a_user(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    reader = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, reader, user_permissions={"can_read": True})
    target = await room.add_user(org_id)
    users = room.services.users

    def check(who_id: str, project_id: str | None = None) -> None:
        users.require_admin_over(users.target(room.user(org_id, who_id, project_id), target))

    check(admin.account_id)
    with pytest.raises(Denied):
        check(reader)
    with pytest.raises(Denied):
        check(target)  # not over themselves
    with pytest.raises(NotFound):
        check(await room.add_user(org_id))
