"""edge/tenancy/roles.py: who may create, change and delete a role; the admin-only fields;
outranking (only org admins touch an org-admin role); holders logged out when a role stops
making them admins; and the role limit of a creator's own access."""

from __future__ import annotations

import pytest

from edge.kernel.errors import DeleteProtected, Denied, NotFound, ValidationError
from edge.kernel.listing import ListQuery
from edge.kernel.principal import Principal
from tests.edge.rooms import CRUD, Room

ADMIN = {"is_admin": True}


async def _role_manager(room: Room, org_id: str) -> Principal:
    """A user with every role permission at org level, and no admin status."""
    user_id = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, user_id, role_permissions=CRUD)
    return room.user(org_id, user_id)


async def test_creating_needs_role_create_and_admin_fields_need_admins(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    plain = room.user(org_id, await room.add_user(org_id))
    manager = await _role_manager(room, org_id)
    with pytest.raises(Denied):
        await room.role(plain)
    await room.role(manager)
    for body in (
        {"org_permissions": ADMIN},
        {"project_id": project_id, "project_permissions": ADMIN},
        {"restricted_custom_attributes": {"tier": "gold"}},
    ):
        with pytest.raises(Denied):
            await room.role(manager, **body)
    with pytest.raises(ValidationError) as refused:
        await room.role(admin, project_permissions=ADMIN)  # an org-level role
    assert refused.value.field == "project_permissions"
    made = await room.role(admin, project_id, project_permissions=ADMIN)
    shown = room.services.roles.get(admin, made)
    assert shown["is_project_admin"] is True and shown["project_permissions"]["is_admin"]
    assert shown["is_org_admin"] is False and shown["is_active"] is True


async def test_only_those_who_outrank_a_role_change_it(room: Room) -> None:
    """Non-admins never change admin roles; a project's admins change its admin roles, never
    an org-admin role."""
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    manager = await _role_manager(room, org_id)
    lead = await room.add_user(org_id)
    await room.grant(org_id, "project", project_id, lead, is_admin=True)
    await room.grant(org_id, "org", org_id, lead, role_permissions=CRUD)
    as_lead = room.user(org_id, lead)
    in_project = await room.add_user(org_id)  # every role permission in the project
    await room.grant(org_id, "project", project_id, in_project, role_permissions=CRUD)
    ward = await room.group(admin)
    editor = await room.add_user(org_id)  # every role permission in a group the roles reach
    await room.grant(org_id, "group", ward, editor, can_read=True, role_permissions=CRUD)
    bosses = await room.role(admin, project_id, name="Bosses", org_permissions=ADMIN)
    leads = await room.role(admin, project_id, name="Leads", project_permissions=ADMIN)
    nurses = await room.role(admin, name="Nurses")
    for role_id in (bosses, leads):
        await room.grant(org_id, "group", ward, role_id, "role")
    roles = room.services.roles
    assert roles.get(manager, bosses)["is_org_admin"] is True  # reading is fine
    as_in_project, as_editor = room.user(org_id, in_project), room.user(org_id, editor)
    for who, role_id in (
        (manager, bosses),
        (manager, leads),
        (as_lead, bosses),
        (as_in_project, leads),
        (as_editor, bosses),
        (as_editor, leads),
    ):
        with pytest.raises(Denied):
            await roles.patch(who, role_id, {"description": "mine now"})
        with pytest.raises(Denied):
            await roles.delete(who, role_id, force=False, permanent=False)
    await roles.patch(as_lead, leads, {"description": "Shift leads"})
    await roles.patch(manager, nurses, {"description": "Night shift"})
    await roles.delete(manager, nurses, force=False, permanent=False)
    await roles.delete(as_lead, leads, force=False, permanent=False)
    await roles.patch(admin, bosses, {"description": "Board"})


async def test_a_holder_with_can_update_edits_but_does_not_suspend(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    role_id = await room.role(admin)
    holder = await room.add_user(org_id)
    await room.grant(org_id, "role", role_id, holder, can_read=True, can_update=True)
    roles, as_holder = room.services.roles, room.user(org_id, holder)
    await roles.patch(as_holder, role_id, {"description": "Ours"})
    with pytest.raises(Denied):
        await roles.patch(as_holder, role_id, {"is_active": False})
    assert "is_active" not in roles.get(as_holder, role_id)  # admins only
    stranger = room.user(org_id, await room.add_user(org_id))
    with pytest.raises(NotFound):
        roles.get(stranger, role_id)


async def test_holders_are_logged_out_when_a_role_stops_making_them_admins(
    room: Room,
) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    bosses = await room.role(admin, name="Bosses", org_permissions=ADMIN)
    plain = await room.role(admin, name="Plain")
    holder, bystander = await room.add_user(org_id), await room.add_user(org_id)
    for role_id in (bosses, plain):
        await room.grant(org_id, "role", role_id, holder)
    await room.grant(org_id, "role", plain, bystander)
    token = await room.session(room.user(org_id, holder))
    other = await room.session(room.user(org_id, bystander))
    await room.services.roles.patch(admin, plain, {"is_active": False})  # not an admin role
    keeps = {"name": "Board", "org_permissions": {"is_admin": True, "can_read": True}}
    await room.services.roles.patch(admin, bosses, keeps)
    assert room.signed_in(token)
    await room.services.roles.patch(admin, bosses, {"org_permissions": {"can_read": True}})
    assert not room.signed_in(token) and room.signed_in(other)
    await room.services.roles.patch(admin, bosses, {"org_permissions": ADMIN})
    token = await room.session(room.user(org_id, holder))
    await room.services.roles.delete(admin, bosses, force=False, permanent=False)
    assert not room.signed_in(token)


async def test_every_holder_is_logged_out_when_a_project_admin_role_stops(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    leads = await room.role(admin, project_id, name="Leads", project_permissions=ADMIN)
    holders = [await room.add_user(org_id), await room.add_user(org_id)]
    for holder in holders:
        await room.grant(org_id, "role", leads, holder)
    tokens = [await room.session(room.user(org_id, holder)) for holder in holders]
    bystander = await room.session(room.user(org_id, await room.add_user(org_id)))
    await room.services.roles.patch(admin, leads, {"project_permissions": {"can_read": True}})
    assert not any(room.signed_in(token) for token in tokens)
    assert room.signed_in(bystander)


async def test_suspending_an_admin_role_logs_its_holders_out(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    bosses = await room.role(admin, org_permissions=ADMIN)
    holder = await room.add_user(org_id)
    await room.grant(org_id, "role", bosses, holder)
    token = await room.session(room.user(org_id, holder))
    assert room.services.permissions.caller(room.user(org_id, holder)).is_org_admin
    await room.services.roles.patch(admin, bosses, {"is_active": False})
    assert not room.signed_in(token)
    assert not room.services.permissions.caller(room.user(org_id, holder)).is_org_admin


async def test_the_creators_own_access_counts_against_the_role_limit(room: Room) -> None:
    org_id = await room.org(max_roles_per_user=1)
    user_id = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, user_id, role_permissions={"can_create": True})
    user = room.user(org_id, user_id)
    first = await room.role(user, create_own_access=True)
    assert room.services.roles.get(user, first)["id"] == first  # held: readable
    with pytest.raises(ValidationError):
        await room.role(user, name="Second", create_own_access=True)
    listed = await room.services.roles.list(await room.admin(org_id), ListQuery(), None, None)
    assert [r["id"] for r in listed.rows] == [first]  # the refused create wrote nothing


async def test_delete_protection_by_default_and_force(room: Room) -> None:
    org_id = await room.org(role_delete_protection_on_by_default=True)
    admin = await room.admin(org_id)
    role_id = await room.role(admin)
    manager = await _role_manager(room, org_id)
    roles = room.services.roles
    assert roles.get(admin, role_id)["is_delete_protected"] is True
    with pytest.raises(DeleteProtected):
        await roles.delete(manager, role_id, force=False, permanent=False)
    with pytest.raises(Denied):
        await roles.delete(manager, role_id, force=True, permanent=False)
    await roles.delete(admin, role_id, force=True, permanent=False)


async def test_a_group_admin_filter_needs_a_group_and_org_access_must_exist(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    role_id = await room.role(admin)
    with pytest.raises(ValidationError):
        await room.services.roles.list(admin, ListQuery(), None, True)
    with pytest.raises(NotFound):
        room.services.roles.org_access(admin, role_id)
    await room.services.roles.patch(admin, role_id, {"org_permissions": {"can_read": True}})
    assert room.services.roles.org_access(admin, role_id)["can_read"] is True
