"""edge/tenancy/trash.py: the guard every delete shares (protection needs `force`, only
admins force), the trash's reach (org admins, and project admins for their projects),
restoring (refused when a new record took its place), erasing, and what is audited."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from edge.kernel.errors import DeleteProtected, Denied, NotFound
from edge.kernel.listing import ListQuery
from edge.tenancy.trash import RestoreBlocked
from tests.edge.rooms import Room

BY_DATE = ListQuery(order_by="deleted_date")


@dataclass(frozen=True)
class Record:
    id: str
    org_id: str
    is_delete_protected: bool
    name: str = "Ward"
    project_id: str | None = None


@pytest.mark.parametrize(
    ("protected", "force", "may_force", "refused"),
    [
        (True, False, True, DeleteProtected),
        (True, True, False, Denied),
        (False, True, False, Denied),  # force is for admins even when not needed
        (True, True, True, None),
        (False, False, False, None),
    ],
)
async def test_the_guard_every_delete_shares(
    room: Room, protected: bool, force: bool, may_force: bool, refused: type[Exception] | None
) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    group_id = await room.group(admin)
    record = Record(group_id, org_id, protected)
    delete = room.services.trash.delete(
        admin, "group", record, force=force, may_force=may_force, permanent=False
    )
    if refused is None:
        await delete
        assert [e["id"] for e in (await room.services.trash.list(admin, BY_DATE)).rows] == [
            group_id
        ]
    else:
        with pytest.raises(refused):
            await delete
        assert room.services.groups.get(admin, group_id)["id"] == group_id  # still there


async def test_only_admins_see_the_trash_and_project_admins_their_projects(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    apollo, gemini = await room.project(admin, "Apollo"), await room.project(admin, "Gemini")
    in_apollo = await room.group(admin, apollo, name="Lab")
    in_gemini = await room.group(admin, gemini, name="Dock")
    at_org = await room.group(admin)
    for group_id in (in_apollo, in_gemini, at_org):
        await room.services.groups.delete(admin, group_id, force=False, permanent=False)
    lead = room.user(org_id, await room.add_user(org_id))
    await room.grant(org_id, "project", apollo, lead.account_id, is_admin=True)
    trash = room.services.trash
    every = await trash.list(admin, BY_DATE)
    assert {e["id"] for e in every.rows} == {in_apollo, in_gemini, at_org}
    assert [e["id"] for e in (await trash.list(lead, BY_DATE)).rows] == [in_apollo]
    for outside in (in_gemini, at_org):
        with pytest.raises(NotFound):
            trash.get(lead, outside)
        with pytest.raises(NotFound):
            await trash.restore(lead, outside)
    await trash.restore(lead, in_apollo)


@pytest.mark.parametrize("who", ["plain", "group admin"])
async def test_other_members_may_not_see_or_touch_the_trash(room: Room, who: str) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    ward, gone = await room.group(admin, name="Ward"), await room.group(admin, name="Gone")
    member = await room.add_user(org_id)
    if who == "group admin":
        await room.grant(org_id, "group", ward, member, is_admin=True)
    await room.services.groups.delete(admin, gone, force=False, permanent=False)
    trash, caller = room.services.trash, room.user(org_id, member)
    with pytest.raises(Denied):
        await trash.list(caller, BY_DATE)
    with pytest.raises(Denied):
        await trash.restore(caller, gone)
    with pytest.raises(Denied):
        await trash.erase(caller, gone)
    with pytest.raises(Denied):
        await trash.list(room.staff(), BY_DATE)  # staff: with a scope only


async def test_another_orgs_trash_is_not_found(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    group_id = await room.group(admin)
    await room.services.groups.delete(admin, group_id, force=False, permanent=False)
    stranger, trash = await room.admin(await room.org("Other")), room.services.trash
    with pytest.raises(NotFound):
        trash.get(stranger, group_id)
    with pytest.raises(NotFound):
        await trash.restore(stranger, group_id)
    with pytest.raises(NotFound):
        await trash.erase(stranger, group_id)
    assert (await trash.list(stranger, BY_DATE)).rows == []


async def test_a_deleted_user_leaves_lookups_and_its_sessions_end(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    user_id = await room.add_user(org_id, username="nurse")
    token = await room.session(room.user(org_id, user_id))
    await room.services.users.delete(admin, user_id, force=False, permanent=False)
    assert not room.signed_in(token)
    with pytest.raises(NotFound):
        room.services.users.get(admin, user_id)
    entry = room.services.trash.get(admin, user_id)
    assert (entry["kind"], entry["name"], entry["deleted_by"]) == (
        "user",
        "nurse",
        admin.account_id,
    )
    assert entry["purge_after"] > entry["deleted_date"]


async def test_restore_brings_it_back_unless_its_name_was_taken(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    first = await room.add_user(org_id, username="nurse", email="nurse@x.test")
    users, trash = room.services.users, room.services.trash
    await users.delete(admin, first, force=False, permanent=False)
    await trash.restore(admin, first)
    assert users.get(admin, first)["username"] == "nurse"
    await users.delete(admin, first, force=False, permanent=False)
    await room.add_user(org_id, username="nurse", email="nurse@x.test")  # takes its place
    with pytest.raises(RestoreBlocked):
        await trash.restore(admin, first)
    await trash.erase(admin, first)
    with pytest.raises(NotFound):
        trash.get(admin, first)


async def test_permanent_erases_at_once(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    role_id = await room.role(admin)
    await room.services.roles.delete(admin, role_id, force=False, permanent=True)
    assert (await room.services.trash.list(admin, BY_DATE)).rows == []
    with pytest.raises(NotFound):
        room.services.roles.get(admin, role_id)


async def test_deleting_accounts_and_roles_is_audited_groups_are_not(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    group_id, role_id = await room.group(admin), await room.role(admin)
    user_id = await room.add_user(org_id)
    await room.services.groups.delete(admin, group_id, force=False, permanent=False)
    await room.services.roles.delete(admin, role_id, force=False, permanent=True)
    await room.services.users.delete(admin, user_id, force=False, permanent=False)
    await room.services.trash.restore(admin, user_id)
    found = [(e.action, e.target_id, e.details) for e in await room.events(org_id)]
    assert found[-3:] == [
        ("role_deleted", role_id, {"permanent": True, "name": "Nurses"}),
        ("user_deleted", user_id, {"permanent": False, "name": found[-2][2]["name"]}),
        ("user_restored", user_id, {"name": found[-2][2]["name"]}),
    ]
    assert not any(e[0] == "group_deleted" for e in found)
