"""edge/tenancy/orgs.py: only staff manage organizations; a new org takes every setting's
default; aliases are unique and resolve a client ID; delete protection needs `force`."""

from __future__ import annotations

import pytest

from edge.accounts.lists import Filters
from edge.kernel.errors import AliasTaken, DeleteProtected, Denied, NotFound, ValidationError
from edge.kernel.listing import ListQuery
from edge.tenancy.settings import SETTINGS
from tests.edge.rooms import Room


async def test_only_staff_manage_organizations(room: Room) -> None:
    """An org admin is refused on their own org, on another, and on one that does not exist
    (before it is looked up), and nothing they asked for happens."""
    org_id = await room.org()
    other = await room.org("Other")
    admin = await room.admin(org_id)
    orgs = room.services.orgs
    with pytest.raises(Denied):
        await orgs.create(admin, {"name": "Mine"})
    with pytest.raises(Denied):
        await orgs.list(admin, ListQuery())
    for target in (org_id, other, "unknownOrgId0001"):
        with pytest.raises(Denied):
            orgs.get(admin, target)
        with pytest.raises(Denied):
            await orgs.patch(admin, target, {"name": "Renamed"})
        with pytest.raises(Denied):
            await orgs.delete(admin, target, force=True)
    shown = (await orgs.list(room.staff(), ListQuery())).rows
    assert sorted(o["name"] for o in shown) == ["Clinic", "Other"]


async def test_a_new_org_holds_every_default_and_the_settings_given(room: Room) -> None:
    org_id = await room.org(alias="clinic", session_expire_mins=10)
    shown = room.services.orgs.get(room.staff(), org_id)
    assert shown["alias"] == "clinic" and shown["is_active"] is True
    assert shown["session_expire_mins"] == 10
    for name, (default, _) in SETTINGS.items():
        if name != "session_expire_mins":
            assert shown[name] == default, name


async def test_create_refuses_a_missing_name_and_bad_settings(room: Room) -> None:
    with pytest.raises(ValidationError) as missing:
        await room.services.orgs.create(room.staff(), {})
    assert missing.value.field == "name"
    with pytest.raises(ValidationError) as bad:
        await room.org(session_expire_mins=99)
    assert bad.value.field == "session_expire_mins"


async def test_an_alias_is_unique_and_freed_by_a_rename(room: Room) -> None:
    first = await room.org(alias="clinic")
    with pytest.raises(AliasTaken):
        await room.org("Other", alias="Clinic")
    await room.services.orgs.patch(room.staff(), first, {"alias": "moved"})
    second = await room.org("Other", alias="clinic")  # the old alias is free again
    orgs = room.services.orgs
    assert orgs.resolve_client("CLINIC").id == second
    assert orgs.resolve_client("moved").id == first
    assert orgs.resolve_client(first).id == first
    with pytest.raises(ValidationError):
        orgs.resolve_client("nobody")


async def test_patch_keeps_the_settings_it_does_not_name(room: Room) -> None:
    org_id = await room.org(mfa_required=True)
    await room.services.orgs.patch(
        room.staff(), org_id, {"name": "Renamed", "pii_admin_only": True}
    )
    shown = room.services.orgs.get(room.staff(), org_id)
    assert (shown["name"], shown["mfa_required"], shown["pii_admin_only"]) == (
        "Renamed",
        True,
        True,
    )


async def test_delete_protection_needs_force(room: Room) -> None:
    org_id = await room.org(is_delete_protected=True)
    orgs = room.services.orgs
    with pytest.raises(DeleteProtected):
        await orgs.delete(room.staff(), org_id, force=False)
    assert orgs.get(room.staff(), org_id)["is_delete_protected"] is True  # still kept
    await orgs.delete(room.staff(), org_id, force=True)
    with pytest.raises(NotFound):
        orgs.get(room.staff(), org_id)


async def test_the_first_admin_is_made_with_the_org_and_audited(room: Room) -> None:
    admin = {"email": "boss@clinic.test", "password": "a-long-enough-password-1"}
    org_id = await room.services.orgs.create(room.staff(), {"name": "Clinic"}, admin=admin)
    page = await room.services.users.list(room.staff(org_id), ListQuery(), Filters())
    assert [u["email"] for u in page.rows] == ["boss@clinic.test"]
    boss = page.rows[0]["id"]
    assert room.services.permissions.caller(room.user(org_id, boss)).is_org_admin
    made = [(e.action, e.target_id) for e in await room.events(org_id)]
    assert made == [("org_created", org_id), ("user_created", boss)]


async def test_the_first_admin_password_follows_the_policy(room: Room) -> None:
    admin = {"email": "boss@clinic.test", "password": "short"}
    with pytest.raises(ValidationError) as refused:
        await room.services.orgs.create(room.staff(), {"name": "Clinic"}, admin=admin)
    assert refused.value.field == "admin_password"
    assert (await room.services.orgs.list(room.staff(), ListQuery())).rows == []
