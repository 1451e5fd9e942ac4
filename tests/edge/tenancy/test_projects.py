"""edge/tenancy/projects.py: who may create, read, update, suspend and delete a project;
the settings a new project copies from its org; names, login fields and sign-in."""

from __future__ import annotations

import pytest

from edge.kernel.errors import DeleteProtected, Denied, NotFound, ValidationError
from edge.kernel.listing import ListQuery
from edge.kernel.principal import Principal
from edge.tenancy.projects import LoginFieldConflict, ProjectNameTaken
from tests.edge.rooms import CRUD, Room


async def _caller(room: Room, org_id: str, **org_access: object) -> Principal:
    """A user of the org holding org access with these values."""
    user_id = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, user_id, **org_access)
    return room.user(org_id, user_id)


async def test_creating_needs_project_create_at_org_level(room: Room) -> None:
    org_id = await room.org()
    plain = room.user(org_id, await room.add_user(org_id))
    with pytest.raises(Denied):
        await room.project(plain)
    creator = await _caller(room, org_id, project_permissions={"can_create": True})
    own = await room.services.projects.create(creator, {"name": "Mine"})
    assert room.services.projects.get(creator, own)["name"] == "Mine"  # its own access
    other = await room.project(creator, "Not mine")  # create_own_access false
    with pytest.raises(NotFound):
        room.services.projects.get(creator, other)


async def test_staff_need_a_scope(room: Room) -> None:
    await room.org()
    with pytest.raises(Denied):
        await room.project(room.staff())


async def test_a_new_project_copies_its_org_settings_once(room: Room) -> None:
    org_id = await room.org(
        device_owners_can_tunnel=True, project_delete_protection_on_by_default=True
    )
    admin = await room.admin(org_id)
    project_id = await room.project(admin, session_expire_mins=7)
    await room.services.orgs.patch(room.staff(), org_id, {"device_owners_can_tunnel": False})
    shown = room.services.projects.get(admin, project_id)
    assert shown["device_owners_can_tunnel"] is True  # a copy made at creation
    assert shown["session_expire_mins"] == 7 and shown["is_delete_protected"] is True
    assert shown["custom_settings"] == {} and "mfa_required" not in shown


async def test_names_are_unique_in_an_org_whatever_their_case(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    first = await room.project(admin, "Apollo")
    with pytest.raises(ProjectNameTaken):
        await room.project(admin, "APOLLO")
    second = await room.project(admin, "Gemini")
    with pytest.raises(ProjectNameTaken):
        await room.services.projects.patch(admin, second, {"name": "apollo"})
    await room.services.projects.patch(admin, first, {"name": "apollo"})  # itself: fine
    other_org = await room.org("Other")
    await room.project(await room.admin(other_org), "Apollo")  # another org: fine


async def test_updating_is_not_suspending(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    updater = await _caller(room, org_id)
    await room.grant(org_id, "project", project_id, updater.account_id, can_update=True)
    projects = room.services.projects
    await projects.patch(updater, project_id, {"description": "Moon"})
    with pytest.raises(Denied):
        await projects.patch(updater, project_id, {"is_active": False})
    await projects.patch(updater, project_id, {"is_active": True})  # no change: no suspension
    with pytest.raises(Denied):
        projects.get(updater, project_id)  # can_update is not can_read
    await projects.patch(admin, project_id, {"is_active": False})
    assert projects.get(admin, project_id)["is_active"] is False


async def test_only_admins_see_is_active(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    reader = await _caller(room, org_id, project_permissions={"can_read": True})
    assert "is_active" in room.services.projects.get(admin, project_id)
    assert "is_active" not in room.services.projects.get(reader, project_id)


async def test_delete_protection_and_who_may_force(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin, is_delete_protected=True)
    deleter = await _caller(room, org_id, project_permissions=CRUD)
    projects = room.services.projects
    with pytest.raises(DeleteProtected):
        await projects.delete(deleter, project_id, force=False, permanent=False)
    with pytest.raises(Denied):
        await projects.delete(deleter, project_id, force=True, permanent=False)
    await projects.delete(admin, project_id, force=True, permanent=False)
    with pytest.raises(NotFound):
        projects.get(admin, project_id)


async def test_a_project_session_knows_only_its_project_through_project_access(
    room: Room,
) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    apollo, gemini = await room.project(admin, "Apollo"), await room.project(admin, "Gemini")
    user_id = await room.add_user(org_id)
    for project_id in (apollo, gemini):
        await room.grant(org_id, "project", project_id, user_id, can_read=True)
    in_apollo = room.user(org_id, user_id, apollo)
    assert room.services.projects.get(in_apollo, apollo)["id"] == apollo
    with pytest.raises(NotFound):
        room.services.projects.get(in_apollo, gemini)
    listed = await room.services.projects.list(in_apollo, ListQuery())
    assert [p["id"] for p in listed.rows] == [apollo]
    org_level = await room.services.projects.list(room.user(org_id, user_id), ListQuery())
    assert {p["id"] for p in org_level.rows} == {apollo, gemini}


async def test_a_list_holds_the_active_projects_the_caller_may_read(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    apollo, gemini = await room.project(admin, "Apollo"), await room.project(admin, "Gemini")
    suspended = await room.project(admin, "Mercury")
    user_id = await room.add_user(org_id)
    await room.grant(org_id, "project", apollo, user_id, can_read=True)
    await room.grant(org_id, "project", gemini, user_id)  # held, without can_read
    await room.grant(org_id, "project", suspended, user_id, can_read=True)
    await room.services.projects.patch(admin, suspended, {"is_active": False})
    mine = await room.services.projects.list(room.user(org_id, user_id), ListQuery())
    assert [p["id"] for p in mine.rows] == [apollo]
    every = await room.services.projects.list(admin, ListQuery())
    assert len(every.rows) == 3


async def test_mine_needs_a_project_session_and_admins_to_change(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    member = await _caller(room, org_id)
    await room.grant(org_id, "project", project_id, member.account_id)
    in_project = room.user(org_id, member.account_id, project_id)
    projects = room.services.projects
    with pytest.raises(NotFound):
        projects.mine(member)
    assert projects.mine(in_project)["id"] == project_id  # no can_read needed
    with pytest.raises(Denied):
        await projects.patch_mine(in_project, {"session_expire_mins": 9})
    await projects.patch_mine(
        room.user(org_id, admin.account_id, project_id), {"session_expire_mins": 9}
    )
    assert projects.mine(in_project)["session_expire_mins"] == 9


async def test_sign_in_admits_members_of_active_projects(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin, alias="apollo")
    member, stranger = await room.add_user(org_id), await room.add_user(org_id)
    await room.grant(org_id, "project", project_id, member)
    projects = room.services.projects
    org, project = projects.resolve_client("Apollo")
    assert (org.id, project and project.id) == (org_id, project_id)
    assert project is not None
    projects.admit(project, member)
    projects.admit(project, admin.account_id)  # org admins hold every project
    with pytest.raises(Denied):
        projects.admit(project, stranger)
    await projects.patch(admin, project_id, {"is_active": False})
    with pytest.raises(Denied):
        projects.admit(projects.session_project(project_id), member)


async def test_logins_follow_the_projects_allowed_fields(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin, allowed_login_fields=["email"])
    await room.add_user(org_id, project_id, username="nurse", email="nurse@x.test")
    projects = room.services.projects
    org = room.services.orgs.get_row(org_id)
    project = projects.session_project(project_id)
    assert projects.find_login(org, project, "nurse") is None  # usernames not allowed here
    found = projects.find_login(org, project, "NURSE@x.test")
    assert found is not None and found.username == "nurse"
    assert projects.find_login(org, None, "nurse") is not None  # the org allows usernames
    shown = projects.client_interface(project_id)
    assert shown["allowed_login_fields"] == ["email"]
    with pytest.raises(NotFound):
        projects.client_interface("nobody")


async def test_enabling_a_login_field_that_would_name_two_accounts_is_refused(
    room: Room,
) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin, allowed_login_fields=["email"])
    for _ in range(2):
        await room.add_user(org_id, project_id, phone_number="+15550100", phone_folded="+15550100")
    with pytest.raises(LoginFieldConflict):
        await room.services.projects.patch(
            admin, project_id, {"allowed_login_fields": ["email", "phone_number"]}
        )
    with pytest.raises(ValidationError):
        await room.services.projects.patch(admin, project_id, {"allowed_login_fields": ["pin"]})
