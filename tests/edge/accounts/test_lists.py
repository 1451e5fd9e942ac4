"""edge/accounts/lists.py: the accounts a list holds for a caller (what they may read, in
their project session), the membership filters and what they need, the filters and search
refused where they would reveal what the response hides, and phone filters compared
cleaned."""

from __future__ import annotations

import pytest

from edge.accounts.lists import Filters
from edge.kernel.errors import Denied, ValidationError
from edge.kernel.listing import Filter, ListQuery
from edge.kernel.principal import Principal
from tests.edge.rooms import Room

READ = {"can_read": True}
PASSWORD = "a-long-enough-password-1"
EVERYONE = Filters()


async def ids(
    room: Room, who: Principal, membership: Filters = EVERYONE, **query: object
) -> set[str]:
    """The IDs of the users a list holds (`query`: the ListQuery's fields)."""
    page = await room.services.users.list(who, ListQuery(**query), membership)  # type: ignore[arg-type]
    return {row["id"] for row in page.rows}


async def test_a_list_holds_what_the_caller_may_read(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    ward = await room.group(admin)
    head, member = await room.add_user(org_id), await room.add_user(org_id)
    outsider = await room.add_user(org_id)
    await room.grant(org_id, "group", ward, head, is_admin=True)
    await room.grant(org_id, "group", ward, member)
    assert await ids(room, room.user(org_id, head)) == {head, member}  # and themselves
    assert await ids(room, room.user(org_id, outsider)) == {outsider}
    assert await ids(room, admin) == {admin.account_id, head, member, outsider}
    other = await room.admin(await room.org("Other"))
    assert await ids(room, other) == {other.account_id}


async def test_a_project_session_lists_the_accounts_at_home_in_its_project(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    at_home = await room.add_user(org_id, project_id)
    await room.add_user(org_id)
    in_project = room.user(org_id, admin.account_id, project_id)
    assert await ids(room, in_project) == {at_home}


async def test_membership_filters(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    ward, nurses = await room.group(admin), await room.role(admin)
    head, member = await room.add_user(org_id), await room.add_user(org_id)
    holder, boss = await room.add_user(org_id), await room.add_user(org_id)
    await room.grant(org_id, "group", ward, head, is_admin=True)
    await room.grant(org_id, "group", ward, member)
    await room.grant(org_id, "role", nurses, holder)
    await room.grant(org_id, "project", project_id, boss, is_admin=True)
    await room.grant(org_id, "project", project_id, member)
    assert await ids(room, admin, Filters(group_id=ward)) == {head, member}
    assert await ids(room, admin, Filters(group_id=ward, is_group_admin=True)) == {head}
    assert await ids(room, admin, Filters(role_id=nurses)) == {holder}
    assert await ids(room, admin, Filters(project_id=project_id)) == {boss, member}
    admins = Filters(project_id=project_id, is_project_admin=True)
    assert await ids(room, admin, admins) == {boss}
    in_project = room.user(org_id, admin.account_id, project_id)
    assert await ids(room, in_project, Filters(is_project_admin=False)) == set()  # none at home
    with pytest.raises(ValidationError) as refused:
        await ids(room, admin, Filters(is_group_admin=True))
    assert refused.value.field == "is_group_admin"
    with pytest.raises(ValidationError) as refused:
        await ids(room, admin, Filters(is_project_admin=True))
    assert refused.value.field == "is_project_admin"


async def test_exclude_admins_is_for_those_who_are_not_admins(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    ward = await room.group(admin)
    reader = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, reader, user_permissions=READ)
    member, boss = await room.add_user(org_id), await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, boss, is_admin=True)
    for user_id in (member, boss):
        await room.grant(org_id, "group", ward, user_id)
    excluding = Filters(group_id=ward, exclude_admins=True)
    assert await ids(room, room.user(org_id, reader), excluding) == {member}
    assert await ids(room, admin, excluding) == {member, boss}  # an admin sees every member
    assert await ids(room, room.user(org_id, reader), Filters(exclude_admins=True)) == {
        admin.account_id,
        reader,
        member,
        boss,
    }  # without a group or project it narrows nothing


async def test_admin_only_and_hidden_fields_are_no_filter_for_others(room: Room) -> None:
    org_id = await room.org(pii_admin_only=True)
    admin = await room.admin(org_id)
    reader = room.user(org_id, await room.add_user(org_id))
    await room.grant(org_id, "org", org_id, reader.account_id, user_permissions=READ)
    active = (Filter("is_active", "eq", True),)
    with pytest.raises(Denied):
        await ids(room, reader, filters=active)
    with pytest.raises(Denied):
        await ids(room, reader, order_by="is_active")
    for query in (
        {"filters": (Filter("email", "eq", "a@x.test"),)},
        {"filters": (Filter("custom_attributes.shift", "eq", "night"),)},
        {"search": "ada"},
    ):
        with pytest.raises(Denied):
            await ids(room, reader, **query)
    await ids(room, admin, filters=active, search="ada")
    await ids(room, reader, filters=(Filter("username", "eq", "ada"),))  # shown anyway


async def test_search_fields_must_be_searchable_and_phones_compare_cleaned(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    for search in (None, "a"):  # a misspelt field is refused with or without search
        with pytest.raises(ValidationError) as refused:
            await ids(room, admin, search=search, search_fields=("password_hash",))
        assert refused.value.field == "search_fields"
    body = {"email": "called@x.test", "phone_number": "+15550102000", "password": PASSWORD}
    called = await room.services.users.create(admin, body)
    for written in ("+1 (555) 010-2000", "001 555 010 2000", "+1.555.010.2000"):
        found = await ids(room, admin, filters=(Filter("phone_number", "eq", written),))
        assert found == {called}, written
    night = await room.add_user(org_id, custom_attributes={"shift": "nightowl"})
    assert await ids(room, admin, search="nightowl") == {night}  # custom attributes too
