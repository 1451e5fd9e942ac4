"""edge/accounts/standing.py: how a caller stands towards an account. Everyone reads and
updates themselves; org admins are admins over everyone; project admins over the accounts
of their project, group admins over the members of their groups, but neither over an org
or project admin; non-admins never act on admins, nor on the admin of a group they do not
administer; a device's owner reads it, and is its admin when the setting says so; an admin
over a device may always act on it."""

from __future__ import annotations

import pytest

from edge.accounts.kind import Relation
from edge.kernel.principal import Principal
from tests.edge.rooms import CRUD, Room

# (admin, read, update, delete)
NOTHING = (False, False, False, False)
READS = (False, True, False, False)
ACTS = (False, True, True, True)
ADMIN = (True, True, True, True)


def user_rel(room: Room, caller: Principal, user_id: str) -> tuple[bool, ...]:
    rel = room.services.users.target(caller, user_id).rel
    return _flags(rel)


def device_rel(room: Room, caller: Principal, device_id: str) -> tuple[bool, ...]:
    return _flags(room.services.devices.target(caller, device_id).rel)


def _flags(rel: Relation) -> tuple[bool, ...]:
    return (rel.admin, rel.read, rel.update, rel.delete)


async def test_everyone_reads_and_updates_themselves_but_does_not_delete(room: Room) -> None:
    org_id = await room.org()
    user_id = await room.add_user(org_id)
    rel = room.services.users.target(room.user(org_id, user_id), user_id).rel
    assert rel.is_self and _flags(rel) == (False, True, True, False)
    device_id = await room.add_device(org_id)
    own = room.services.devices.target(room.device(org_id, device_id), device_id).rel
    assert own.is_self and _flags(own) == (False, True, True, False)


async def test_org_admins_are_admins_over_everyone(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    other_admin = await room.admin(org_id)
    assert user_rel(room, admin, other_admin.account_id) == ADMIN
    assert user_rel(room, admin, await room.add_user(org_id)) == ADMIN


async def test_org_level_user_permissions_never_act_on_admins(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    manager = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, manager, user_permissions=CRUD)
    as_manager = room.user(org_id, manager)
    project_admin = await room.add_user(org_id)
    await room.grant(org_id, "project", project_id, project_admin, is_admin=True)
    assert user_rel(room, as_manager, await room.add_user(org_id)) == ACTS
    assert user_rel(room, as_manager, admin.account_id) == READS
    assert user_rel(room, as_manager, project_admin) == READS


async def test_project_admins_are_admins_over_their_projects_accounts(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    apollo, gemini = await room.project(admin, "Apollo"), await room.project(admin, "Gemini")
    boss = await room.add_user(org_id)
    await room.grant(org_id, "project", apollo, boss, is_admin=True)
    as_boss = room.user(org_id, boss)
    assert user_rel(room, as_boss, await room.add_user(org_id, apollo)) == ADMIN
    assert user_rel(room, as_boss, await room.add_user(org_id, gemini)) == NOTHING
    assert user_rel(room, as_boss, await room.add_user(org_id)) == NOTHING
    assert user_rel(room, as_boss, admin.account_id) == NOTHING
    assert device_rel(room, as_boss, await room.add_device(org_id, apollo)) == ADMIN


@pytest.mark.parametrize("through_role", [False, True])
async def test_an_account_that_administers_another_project_is_out_of_reach_of_home_admins(
    room: Room, through_role: bool
) -> None:
    """A user or a device at home in Apollo that administers Gemini (itself, or through an
    org-level role): Apollo's admin reads it but is no admin over it and may not change or
    delete it; with its key reset or its e-mail moved, Apollo's admin would be Gemini's. An
    admin of both projects, and an org admin, stand over it."""
    org_id = await room.org()
    admin = await room.admin(org_id)
    apollo, gemini = await room.project(admin, "Apollo"), await room.project(admin, "Gemini")
    boss, both = await room.add_user(org_id), await room.add_user(org_id)
    await room.grant(org_id, "project", apollo, boss, is_admin=True)
    for project_id in (apollo, gemini):
        await room.grant(org_id, "project", project_id, both, is_admin=True)
    user_id = await room.add_user(org_id, apollo)
    device_id = await room.add_device(org_id, apollo)
    role_id = await room.role(admin, name="Gemini admins")
    if through_role:
        await room.grant(org_id, "project", gemini, role_id, "role", is_admin=True)
    for account_id, kind in ((user_id, "user"), (device_id, "device")):
        if through_role:
            await room.grant(org_id, "role", role_id, account_id, kind)
        else:
            await room.grant(org_id, "project", gemini, account_id, kind, is_admin=True)
    for caller, expected in ((room.user(org_id, boss), READS), (room.user(org_id, both), ADMIN)):
        assert user_rel(room, caller, user_id) == expected
        assert device_rel(room, caller, device_id) == expected
    assert user_rel(room, admin, user_id) == device_rel(room, admin, device_id) == ADMIN


async def test_an_admin_of_two_projects_is_out_of_reach_of_the_admin_of_one(room: Room) -> None:
    """Reach must cover all the account administers, not one of it: an admin of Apollo and
    Gemini is acted on by admins of both (before, an admin of either changed them)."""
    org_id = await room.org()
    admin = await room.admin(org_id)
    apollo, gemini = await room.project(admin, "Apollo"), await room.project(admin, "Gemini")
    boss = await room.add_user(org_id)
    await room.grant(org_id, "project", apollo, boss, is_admin=True)
    user_id = await room.add_user(org_id, apollo)
    for project_id in (apollo, gemini):
        await room.grant(org_id, "project", project_id, user_id, is_admin=True)
    assert user_rel(room, room.user(org_id, boss), user_id) == READS
    await room.grant(org_id, "project", gemini, boss, is_admin=True)
    assert user_rel(room, room.user(org_id, boss), user_id) == ADMIN


async def test_a_member_that_administers_another_group_is_out_of_reach_of_the_groups_admin(
    room: Room,
) -> None:
    """A user or a device in Ward that administers Pumps: Ward's admin reads it but is no
    admin over it (with it, they would hold Pumps); an admin of both groups, and the admin
    of the project Pumps is in, stand over it."""
    org_id = await room.org()
    admin = await room.admin(org_id)
    apollo = await room.project(admin, "Apollo")
    ward, pumps = await room.group(admin), await room.group(admin, apollo, name="Pumps")
    head, both, boss = [await room.add_user(org_id) for _ in range(3)]
    await room.grant(org_id, "group", ward, head, is_admin=True)
    for group_id in (ward, pumps):
        await room.grant(org_id, "group", group_id, both, is_admin=True)
    await room.grant(org_id, "project", apollo, boss, is_admin=True)
    user_id, device_id = await room.add_user(org_id), await room.add_device(org_id)
    for account_id, kind in ((user_id, "user"), (device_id, "device")):
        await room.grant(org_id, "group", ward, account_id, kind)
        await room.grant(org_id, "group", pumps, account_id, kind, is_admin=True)
    as_head = room.user(org_id, head)
    assert user_rel(room, as_head, user_id) == device_rel(room, as_head, device_id) == READS
    for caller in (room.user(org_id, both), room.user(org_id, boss), admin):
        assert user_rel(room, caller, user_id) == device_rel(room, caller, device_id) == ADMIN


async def test_group_admins_are_admins_over_members_who_are_not_admins(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    ward = await room.group(admin)
    head = await room.add_user(org_id)
    await room.grant(org_id, "group", ward, head, is_admin=True)
    member, outsider = await room.add_user(org_id), await room.add_user(org_id)
    boss = await room.add_user(org_id)
    await room.grant(org_id, "project", project_id, boss, is_admin=True)
    for user_id in (member, boss):
        await room.grant(org_id, "group", ward, user_id)
    as_head = room.user(org_id, head)
    assert user_rel(room, as_head, member) == ADMIN
    assert user_rel(room, as_head, outsider) == NOTHING
    assert user_rel(room, as_head, boss) == READS  # a project admin: in reach, not in hand
    await room.services.groups.patch(admin, ward, {"is_active": False})
    assert user_rel(room, as_head, member) == NOTHING  # a suspended group gives nothing


async def test_user_rights_never_act_on_a_group_admin_of_groups_they_do_not_administer(
    room: Room,
) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    ward = await room.group(admin)
    head, member = await room.add_user(org_id), await room.add_user(org_id)
    await room.grant(org_id, "group", ward, head, is_admin=True)
    await room.grant(org_id, "group", ward, member)
    manager, keeper = await room.add_user(org_id), await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, manager, user_permissions=CRUD)
    await room.grant(org_id, "group", ward, keeper, user_permissions=CRUD)
    for caller in (room.user(org_id, manager), room.user(org_id, keeper)):
        assert user_rel(room, caller, member) == ACTS
        assert user_rel(room, caller, head) == READS  # in reach, not in hand
    assert user_rel(room, admin, head) == ADMIN
    await room.services.groups.patch(admin, ward, {"is_active": False})
    as_manager = room.user(org_id, manager)
    assert user_rel(room, as_manager, head) == ACTS  # a suspended group shields no one


async def test_group_level_blocks_reach_the_members(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    ward = await room.group(admin)
    reader = await room.add_user(org_id)
    await room.grant(org_id, "group", ward, reader, user_permissions={"can_read": True})
    member = await room.add_user(org_id)
    await room.grant(org_id, "group", ward, member)
    assert user_rel(room, room.user(org_id, reader), member) == READS
    assert user_rel(room, room.user(org_id, reader), await room.add_user(org_id)) == NOTHING


@pytest.mark.parametrize(("owners_are_admins", "expected"), [(False, READS), (True, ADMIN)])
async def test_a_device_owner_reads_it_and_is_its_admin_when_the_setting_says(
    room: Room, owners_are_admins: bool, expected: tuple[bool, ...]
) -> None:
    org_id = await room.org(device_owners_have_admin_access=owners_are_admins)
    owner = await room.add_user(org_id)
    device_id = await room.add_device(org_id, owner_id=owner)
    rel = room.services.devices.target(room.user(org_id, owner), device_id).rel
    assert rel.is_owner and _flags(rel) == expected
    stranger = room.user(org_id, await room.add_user(org_id))
    assert device_rel(room, stranger, device_id) == NOTHING


async def test_an_owner_is_not_made_admin_over_an_admin_device(room: Room) -> None:
    org_id = await room.org(device_owners_have_admin_access=True)
    owner = await room.add_user(org_id)
    device_id = await room.add_device(org_id, owner_id=owner)
    await room.grant(org_id, "org", org_id, device_id, "device", is_admin=True)
    assert device_rel(room, room.user(org_id, owner), device_id) == READS


async def test_an_owner_is_not_made_admin_over_a_device_that_administers_a_group(
    room: Room,
) -> None:
    """The owner's admin standing (the setting) stops at the same shield: a device that
    administers Pumps is its owner's only if the owner administers Pumps too."""
    org_id = await room.org(device_owners_have_admin_access=True)
    admin = await room.admin(org_id)
    pumps = await room.group(admin, name="Pumps")
    owner = await room.add_user(org_id)
    device_id = await room.add_device(org_id, owner_id=owner)
    await room.grant(org_id, "group", pumps, device_id, "device", is_admin=True)
    assert device_rel(room, room.user(org_id, owner), device_id) == READS
    await room.grant(org_id, "group", pumps, owner, is_admin=True)
    assert device_rel(room, room.user(org_id, owner), device_id) == ADMIN
