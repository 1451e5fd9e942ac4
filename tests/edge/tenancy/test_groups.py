"""edge/tenancy/groups.py: who may create, read, update, suspend and delete a group; the
defaults a new group takes from its org or project; the creator's own access."""

from __future__ import annotations

import pytest

from edge.kernel.errors import DeleteProtected, Denied, NotFound, ValidationError
from edge.kernel.listing import ListQuery
from tests.edge.rooms import CRUD, Room


async def test_creating_needs_group_create_where_the_group_goes(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    user_id = await room.add_user(org_id)
    user = room.user(org_id, user_id)
    with pytest.raises(Denied):
        await room.group(user)
    await room.grant(org_id, "project", project_id, user_id, group_permissions={"can_create": True})
    with pytest.raises(Denied):
        await room.group(user)  # not at org level
    made = await room.services.groups.create(user, {"name": "Lab", "project_id": project_id})
    shown = room.services.groups.get(user, made)  # through its own access
    assert shown["project_id"] == project_id


async def test_a_project_session_puts_the_group_in_its_project(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    in_project = room.user(org_id, admin.account_id, project_id)
    group_id = await room.group(in_project)
    assert room.services.groups.get(admin, group_id)["project_id"] == project_id
    with pytest.raises(ValidationError):
        await room.group(admin, project_id="not-a-project")


async def test_defaults_come_from_the_project_then_the_org(room: Room) -> None:
    org_id = await room.org(
        group_delete_protection_on_by_default=True,
        groups_require_delete_permission_to_put_data_by_default=True,
    )
    admin = await room.admin(org_id)
    project_id = await room.project(admin, group_delete_protection_on_by_default=False)
    at_org = room.services.groups.get(admin, await room.group(admin))
    in_project = room.services.groups.get(admin, await room.group(admin, project_id))
    assert at_org["is_delete_protected"] is True
    assert at_org["require_delete_permission_to_put_data"] is True
    assert in_project["is_delete_protected"] is False
    assert in_project["require_delete_permission_to_put_data"] is True  # copied from the org
    assert at_org["num_history"] == 10


async def test_only_project_admins_set_require_delete_permission(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    user_id = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, user_id, group_permissions=CRUD)
    user = room.user(org_id, user_id)
    rdp = {"require_delete_permission_to_put_data": True}
    with pytest.raises(Denied):
        await room.group(user, **rdp)
    group_id = await room.group(user)
    with pytest.raises(Denied):
        await room.services.groups.patch(user, group_id, rdp)
    await room.services.groups.patch(admin, group_id, rdp)
    assert room.services.groups.get(user, group_id)["require_delete_permission_to_put_data"]


async def test_a_group_editor_updates_but_does_not_suspend(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    group_id = await room.group(admin)
    editor = await room.add_user(org_id)
    await room.grant(org_id, "group", group_id, editor, can_read=True, can_update=True)
    groups, as_editor = room.services.groups, room.user(org_id, editor)
    await groups.patch(as_editor, group_id, {"description": "Night shift"})
    with pytest.raises(Denied):
        await groups.patch(as_editor, group_id, {"is_active": False})
    with pytest.raises(Denied):
        await groups.delete(as_editor, group_id, force=False, permanent=False)
    await groups.patch(admin, group_id, {"is_active": False})
    with pytest.raises(NotFound):  # a suspended group's own access counts for nothing
        groups.get(as_editor, group_id)


async def test_a_stranger_gets_not_found_and_a_member_denied(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    group_id = await room.group(admin)
    member, stranger = await room.add_user(org_id), await room.add_user(org_id)
    await room.grant(org_id, "group", group_id, member)
    with pytest.raises(Denied):
        room.services.groups.get(room.user(org_id, member), group_id)
    with pytest.raises(NotFound):
        room.services.groups.get(room.user(org_id, stranger), group_id)
    other_org = await room.org("Other")
    with pytest.raises(NotFound):
        room.services.groups.get(await room.admin(other_org), group_id)


async def test_the_creator_holds_full_access_unless_asked_not_to(room: Room) -> None:
    org_id = await room.org()
    user_id = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, user_id, group_permissions={"can_create": True})
    user = room.user(org_id, user_id)
    own = await room.services.groups.create(user, {"name": "Mine"})
    assert room.services.permissions.caller(user).is_group_admin(own)
    bare = await room.group(user)
    with pytest.raises(NotFound):
        room.services.groups.get(user, bare)
    listed = await room.services.groups.list(user, ListQuery())
    assert [g["id"] for g in listed.rows] == [own]
    events = [e.action for e in await room.events(org_id)]
    assert events == ["org_created", "group_created", "group_created"]


async def test_only_admins_force_a_protected_delete(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    group_id = await room.group(admin, is_delete_protected=True)
    deleter = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, deleter, group_permissions=CRUD)
    groups = room.services.groups
    with pytest.raises(DeleteProtected):
        await groups.delete(room.user(org_id, deleter), group_id, force=False, permanent=False)
    with pytest.raises(Denied):
        await groups.delete(room.user(org_id, deleter), group_id, force=True, permanent=False)
    await groups.delete(admin, group_id, force=True, permanent=True)
    with pytest.raises(NotFound):
        groups.get(admin, group_id)
