"""edge/accounts/service.py: the flow both kinds share. An account the caller may not see
is a 404, one they see but may not change a 403; the reach rule (access goes only to an
account the caller can read, and project access only to its home project); the project a
new account is made in; what the audit log records of a change."""

from __future__ import annotations

import pytest

from edge.accounts.service import changed_fields
from edge.app import Site
from edge.kernel.errors import DeleteProtected, Denied, NotFound, ValidationError
from tests.edge.rooms import CRUD, Room
from tests.rows import Rows

PASSWORD = "a-long-enough-password-1"


async def test_unseen_is_not_found_and_seen_but_refused_is_denied(room: Room) -> None:
    org_id = await room.org()
    reader = await room.add_user(org_id)
    await room.grant(org_id, "org", org_id, reader, user_permissions={"can_read": True})
    target = await room.add_user(org_id)
    users = room.services.users
    as_reader, stranger = room.user(org_id, reader), room.user(org_id, await room.add_user(org_id))
    with pytest.raises(Denied):
        await users.patch(as_reader, target, {"nickname": "Bo"})
    with pytest.raises(Denied):
        await users.delete(as_reader, target, force=False, permanent=False)
    with pytest.raises(NotFound):
        await users.patch(stranger, target, {"nickname": "Bo"})
    with pytest.raises(NotFound):
        users.get(stranger, target)
    other_admin = await room.admin(await room.org("Other"))
    with pytest.raises(NotFound):
        users.get(other_admin, target)  # another org's account does not exist for them


async def test_staff_need_a_scope(room: Room) -> None:
    org_id = await room.org()
    user_id = await room.add_user(org_id)
    with pytest.raises(Denied):
        room.services.users.get(room.staff(), user_id)
    assert room.services.users.get(room.staff(org_id), user_id)["id"] == user_id


async def test_access_is_given_only_to_an_account_in_sight(room: Room) -> None:
    """The reach rule: a project admin may give project access to a user they can read
    without any right to update that user, and never to a user they cannot read."""
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    boss = await room.add_user(org_id)
    await room.grant(org_id, "project", project_id, boss, is_admin=True)
    await room.grant(org_id, "org", org_id, boss, user_permissions={"can_read": True})
    target = await room.add_user(org_id)
    users, as_boss = room.services.users, room.user(org_id, boss, project_id)
    grant = {"project_permissions": {"can_read": True}}
    await users.patch(as_boss, target, grant)
    held = room.services.permissions.caller(room.user(org_id, target))
    assert held.project(project_id).can_read
    with pytest.raises(Denied):
        await users.patch(as_boss, target, {**grant, "nickname": "Bo"})  # an update too
    no_read = await room.add_user(org_id)
    await room.grant(org_id, "project", project_id, no_read, is_admin=True)
    limited, elsewhere = room.user(org_id, no_read, project_id), await room.add_user(org_id)
    assert not users.readable(room.services.permissions.caller(limited), elsewhere)
    with pytest.raises(NotFound):
        await users.patch(limited, elsewhere, grant)
    assert users.readable(room.services.permissions.caller(limited), target)  # now a member


async def test_project_access_goes_only_to_the_accounts_home_project(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    apollo, gemini = await room.project(admin, "Apollo"), await room.project(admin, "Gemini")
    at_gemini = await room.add_user(org_id, gemini)
    device_at_gemini = await room.add_device(org_id, gemini)
    in_apollo = room.user(org_id, admin.account_id, apollo)
    grant = {"project_permissions": {"can_read": True}}
    for accounts, account_id in (
        (room.services.users, at_gemini),
        (room.services.devices, device_at_gemini),
    ):
        with pytest.raises(ValidationError) as refused:  # the same rule for both kinds
            await accounts.patch(in_apollo, account_id, grant)
        assert refused.value.field == "project_permissions"
    await room.services.devices.patch(admin, device_at_gemini, grant)  # its home project
    device = room.services.permissions.caller(room.device(org_id, device_at_gemini))
    assert device.project(gemini).can_read and not device.project(apollo).held
    await room.services.users.patch(admin, at_gemini, grant)  # its home project
    with pytest.raises(ValidationError):  # an org-level user, outside a project session
        await room.services.users.patch(admin, await room.add_user(org_id), grant)


async def test_a_new_account_goes_to_the_sessions_project_or_an_active_one_named(
    room: Room,
) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    apollo, gemini = await room.project(admin, "Apollo"), await room.project(admin, "Gemini")
    users = room.services.users
    in_apollo = room.user(org_id, admin.account_id, apollo)
    made = await users.create(in_apollo, {"email": "a@x.test", "password": PASSWORD})
    assert users.get(admin, made)["project_id"] == apollo
    with pytest.raises(ValidationError) as refused:
        await users.create(in_apollo, {"email": "b@x.test", "project_id": gemini})
    assert refused.value.field == "project_id"
    await room.services.projects.patch(admin, gemini, {"is_active": False})
    with pytest.raises(ValidationError):
        await users.create(admin, {"email": "c@x.test", "project_id": gemini})
    with pytest.raises(ValidationError):
        await users.create(admin, {"email": "d@x.test", "project_id": "nowhere"})


async def test_creating_needs_the_kinds_create_permission_where_it_goes(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    maker = await room.add_user(org_id)
    await room.grant(org_id, "project", project_id, maker, device_permissions={"can_create": True})
    as_maker = room.user(org_id, maker)
    with pytest.raises(Denied):
        await room.services.devices.create(as_maker, {"name": "pump"})
    with pytest.raises(Denied):
        await room.services.users.create(as_maker, {"email": "x@x.test", "project_id": project_id})
    made = await room.services.devices.create(as_maker, {"name": "pump", "project_id": project_id})
    assert made["id"]


@pytest.mark.parametrize("kind", ["user", "device"])
async def test_only_an_admin_over_the_account_forces_a_delete(room: Room, kind: str) -> None:
    """A protected account needs `force`, and `force` is for admins over it, even for a
    caller who may delete it."""
    org_id = await room.org()
    admin = await room.admin(org_id)
    manager = await room.add_user(org_id)
    perms = {f"{kind}_permissions": CRUD}
    await room.grant(org_id, "org", org_id, manager, **perms)
    add = room.add_user if kind == "user" else room.add_device
    target = await add(org_id, is_delete_protected=True)
    accounts = room.services.users if kind == "user" else room.services.devices
    as_manager = room.user(org_id, manager)
    with pytest.raises(DeleteProtected):
        await accounts.delete(as_manager, target, force=False, permanent=False)
    with pytest.raises(Denied):
        await accounts.delete(as_manager, target, force=True, permanent=False)
    await accounts.delete(admin, target, force=True, permanent=False)


def test_the_audit_log_records_names_and_standing_never_secrets() -> None:
    body = {
        "email": "a@x.test",
        "password": "secret-1",
        "temp_password": "secret-2",
        "is_active": False,
        "org_permissions": {"is_admin": True},
        "project_permissions": {"can_read": True},
        "iot_scopes": {"b": {}, "a": {}},
    }
    assert changed_fields(body) == {
        "fields": ["email", "iot_scopes", "is_active", "org_permissions", "project_permissions"],
        "is_active": False,
        "org_admin": True,
        "iot_scopes": ["a", "b"],
    }


async def test_a_create_and_an_update_are_audited_with_their_fields(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    users = room.services.users
    made = await users.create(admin, {"email": "a@x.test", "password": PASSWORD})
    await users.patch(admin, made, {"is_active": False})
    found = [(e.action, e.target_id, e.details) for e in await room.events(org_id)][-2:]
    assert found == [
        ("user_created", made, {"fields": ["email"]}),
        ("user_updated", made, {"fields": ["is_active"], "is_active": False}),
    ]


def _seen_by_org_admin(site: Site, held: int) -> tuple[dict[str, int], bool, bool]:
    """An org admin asks whether it may read a user holding `held` group accesses (the
    reach rule of every grant): the SQL work counted, and the answers for that user and for
    a user of another org."""
    rows = Rows(site)
    rows.org()
    admin, grantee = rows.user(), rows.user()
    rows.grant("org", rows.org_id, admin, is_admin=True)
    rows.grant_many("group", rows.groups(held), grantee, can_read=True)
    caller = rows.caller(admin)
    rows.org()
    stranger = rows.user()
    users = site.services.users
    with site.services.db.counting() as counts:
        seen = users.readable(caller, grantee)
    return dict(counts), seen, users.readable(caller, stranger)


def test_an_org_admin_sees_a_grantee_at_the_same_cost_whatever_it_holds(site: Site) -> None:
    """Each grant asks whether the caller may read the grantee; for an org admin that read
    every access object the grantee held (0.35 s at 4,000), though an org admin may read
    every user of its org."""
    small, seen_small, stranger_small = _seen_by_org_admin(site, 2)
    large, seen_large, stranger_large = _seen_by_org_admin(site, 2000)
    assert seen_small and seen_large
    assert not stranger_small and not stranger_large  # another org's user stays unknown
    assert large["vm_steps"] <= small["vm_steps"] * 1.1, (small, large)


def test_a_caller_without_reach_does_not_see_a_grantee(site: Site) -> None:
    rows = Rows(site)
    rows.org()
    caller, grantee = rows.user(), rows.user()
    rows.grant_many("group", rows.groups(3), grantee, can_read=True)
    assert not site.services.users.readable(rows.caller(caller), grantee)
    assert not site.services.users.readable(rows.caller(caller), "no-such-user")
