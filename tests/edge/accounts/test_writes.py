"""edge/accounts/writes.py: a new account's defaults (the project's settings over the
org's), and the org and project access a body sets on an account: who may set them, and a
patch merging into the access already held (telling whether admin status was lost)."""

from __future__ import annotations

import pytest

from edge.accounts import writes
from edge.kernel.errors import Denied, ValidationError
from storage import access as access_store
from tests.edge.rooms import Room


async def test_defaults_come_from_the_project_over_the_org(room: Room) -> None:
    org_id = await room.org(default_locale="de-DE", user_delete_protection_on_by_default=True)
    admin = await room.admin(org_id)
    project_id = await room.project(
        admin, default_locale="fr-FR", user_delete_protection_on_by_default=False
    )
    org = room.services.orgs.get_row(org_id)
    project = room.services.projects.session_project(project_id)
    assert writes.defaults(org, None, "user") == {"locale": "de-DE", "is_delete_protected": True}
    assert writes.defaults(org, project, "user") == {
        "locale": "fr-FR",
        "is_delete_protected": False,
    }
    assert writes.defaults(org, None, "device")["is_delete_protected"] is False  # its own kind


async def test_org_access_by_org_admins_project_access_by_the_projects_admins(
    room: Room,
) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    project_id = await room.project(admin)
    boss = await room.add_user(org_id)
    await room.grant(org_id, "project", project_id, boss, is_admin=True)
    grants = room.services.permissions.caller
    body = {"org_permissions": {"can_read": True}}
    with pytest.raises(Denied):
        writes.access_changes(grants(room.user(org_id, boss)), body, project_id, org_id, "user")
    [change] = writes.access_changes(grants(admin), body, None, org_id, "user")
    assert (change.kind, change.target_id) == ("org", org_id)
    body = {"project_permissions": {"is_admin": True}}
    [change] = writes.access_changes(
        grants(room.user(org_id, boss)), body, project_id, org_id, "user"
    )
    assert (change.kind, change.target_id) == ("project", project_id)
    with pytest.raises(ValidationError) as refused:
        writes.access_changes(grants(admin), body, None, org_id, "device")
    assert refused.value.field == "project_permissions" and "device" in refused.value.message
    plain = room.user(org_id, await room.add_user(org_id))
    with pytest.raises(Denied):
        writes.access_changes(grants(plain), body, project_id, org_id, "user")


async def test_a_patch_merges_into_the_access_held(room: Room) -> None:
    org_id = await room.org()
    user_id = await room.add_user(org_id)
    db = room.services.db

    def write(values: dict[str, object]) -> bool:
        change = writes.AccessChange("org", org_id, values)
        return db.write_sync(
            lambda c: writes.write_access(c, org_id, user_id, "user", "actor", change)
        )

    assert write({"is_admin": True, "user_permissions": {"can_read": True}}) is False  # new
    assert write({"user_permissions": {"can_update": True}}) is False  # still an admin
    held = db.read(lambda c: access_store.get(c, org_id, user_id))
    assert held is not None and held.is_admin
    assert held.permissions["user_permissions"] == {
        "can_create": False,
        "can_read": True,
        "can_update": True,
        "can_delete": False,
    }
    assert write({"is_admin": False}) is True  # admin status lost
    assert write({"is_admin": False}) is False
