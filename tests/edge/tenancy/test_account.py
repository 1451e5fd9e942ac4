"""edge/tenancy/account.py: the caller's own access (their own and their active roles'),
their session's effective permissions, and their dashboard."""

from __future__ import annotations

import pytest

from edge.kernel.errors import Denied, ValidationError
from edge.kernel.listing import ListQuery
from edge.tenancy.account import MAX_WIDGETS, AccessOptions
from tests.edge.rooms import Room

ANY = ListQuery()


async def test_a_member_without_org_access_reads_all_false(room: Room) -> None:
    org_id = await room.org()
    member = room.user(org_id, await room.add_user(org_id))
    shown = room.services.account.org_access(member)["org_access"]
    assert shown["org_id"] == org_id and shown["grantee_id"] == member.account_id
    assert not shown["is_admin"] and not shown["can_read"] and shown["created_date"]
    for block in ("user", "device", "role", "group", "project"):
        assert shown[f"{block}_permissions"] == dict.fromkeys(
            ("can_create", "can_read", "can_update", "can_delete"), False
        )


async def test_staff_hold_no_account(room: Room) -> None:
    org_id = await room.org()
    account, staff = room.services.account, room.staff(org_id)
    with pytest.raises(Denied):
        account.org_access(staff)
    for kind in ("project", "group", "role"):
        with pytest.raises(Denied):
            await account.access(staff, kind, ANY, AccessOptions())
    with pytest.raises(Denied):
        account.dashboard(staff)
    assert account.current_session(staff)["org_permissions"]["is_admin"] is True


async def test_access_lists_hold_the_active_roles_access_too(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    ward, lab, closed = (
        await room.group(admin, name="Ward"),
        await room.group(admin, name="Lab"),
        await room.group(admin, name="Closed"),
    )
    nurses, retired = await room.role(admin, name="Nurses"), await room.role(admin, name="Old")
    user_id = await room.add_user(org_id)
    await room.grant(org_id, "group", ward, user_id)
    await room.grant(org_id, "role", nurses, user_id)
    await room.grant(org_id, "group", lab, nurses, "role")
    await room.grant(org_id, "group", ward, nurses, "role")  # held both ways
    await room.grant(org_id, "role", retired, user_id)
    await room.services.roles.patch(admin, retired, {"is_active": False})
    await room.grant(org_id, "group", closed, retired, "role")
    await room.grant(org_id, "group", closed, user_id)
    await room.services.groups.patch(admin, closed, {"is_active": False})
    account, me = room.services.account, room.user(org_id, user_id)
    page = await account.access(me, "group", ANY, AccessOptions())
    assert sorted((g["group_id"], g["grantee_id"]) for g in page.rows) == sorted(
        [(ward, user_id), (lab, nurses), (ward, nurses)]
    )
    ids = await account.access(me, "group", ANY, AccessOptions(ids_only=True))
    assert sorted(ids.rows) == sorted([ward, lab])  # a target once
    with_closed = AccessOptions(ids_only=True, include_inactive_groups=True)
    assert closed in (await account.access(me, "group", ANY, with_closed)).rows
    roles = await account.access(me, "role", ANY, AccessOptions(ids_only=True))
    assert sorted(roles.rows) == sorted([nurses, retired])


async def test_a_project_session_narrows_the_lists_to_its_project(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    inside, outside = await room.group(admin, project_id, name="Lab"), await room.group(admin)
    user_id = await room.add_user(org_id)
    for group_id in (inside, outside):
        await room.grant(org_id, "group", group_id, user_id)
    me = room.user(org_id, user_id, project_id)
    page = await room.services.account.access(me, "group", ANY, AccessOptions(ids_only=True))
    assert page.rows == [inside]


async def test_search_fields_are_those_of_the_kind(room: Room) -> None:
    org_id = await room.org()
    me = room.user(org_id, await room.add_user(org_id))
    query = ListQuery(search="ward", search_fields=("alias",))
    with pytest.raises(ValidationError) as refused:
        await room.services.account.access(me, "group", query, AccessOptions())
    assert refused.value.field == "search_fields"


async def test_the_current_session_shows_what_an_admin_may_do(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    user_id = await room.add_user(org_id)
    await room.grant(org_id, "project", project_id, user_id, is_admin=True)
    shown = room.services.account.current_session(room.user(org_id, user_id, project_id))
    assert shown["org_permissions"]["is_admin"] is False
    assert shown["org_permissions"]["group_permissions"]["can_read"] is False
    project = shown["project_permissions"]
    assert project["is_admin"] and project["can_read"] and project["can_update"]
    assert project["group_permissions"]["can_delete"] is True  # an admin may do everything
    assert "project_permissions" not in room.services.account.current_session(admin)


async def test_only_users_have_a_dashboard_and_its_widgets_are_checked(room: Room) -> None:
    org_id = await room.org()
    me = room.user(org_id, await room.add_user(org_id))
    account = room.services.account
    assert account.dashboard(me) == {"widgets": []}
    widget = {"order": 1, "widget_type": " chart ", "widget_title": "Pumps", "size": "big"}
    await account.set_dashboard(me, {"widgets": [widget]})
    assert account.dashboard(me)["widgets"] == [{**widget, "widget_type": "chart"}]
    device = room.device(org_id, await room.add_device(org_id))
    with pytest.raises(Denied):
        account.dashboard(device)
    for bad, field in (
        ([widget] * (MAX_WIDGETS + 1), "widgets"),
        ([{**widget, "order": 2**31}], "widgets.0.order"),
        ([{**widget, "widget_title": "x" * 1000}], "widgets.0.widget_title"),
        ([widget, {**widget, "widget_type": ""}], "widgets.1.widget_type"),
    ):
        with pytest.raises(ValidationError) as refused:
            await account.set_dashboard(me, {"widgets": bad})
        assert refused.value.field == field
    assert len(account.dashboard(me)["widgets"]) == 1
