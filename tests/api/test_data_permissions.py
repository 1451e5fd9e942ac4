"""Who may read and write data: each data right next to its denial, path grants on whole
segments (the longest path decides, both ways), legacy against new permissions,
`require_delete_permission_to_put_data` (the group's flag and the org default), grants
through a role, and a device principal (docs/data.md, "Permissions"). The callers are the
world's (tests/world.py), with its data holders; Ward holds the data.
"""

from __future__ import annotations

from typing import Any

import pytest

from edge.data.query import DataQuery
from edge.kernel import clock
from edge.kernel.errors import Denied
from edge.kernel.principal import Principal
from storage import groups as group_store
from storage import orgs as org_store
from tests.world import DATA_CALLERS, World, table

R = {"can_read": True}
W = {"can_write": True}
U = {"can_update": True}
D = {"can_delete": True}


pytestmark = pytest.mark.world("content")  # the data holders (tests/world.py)


@pytest.fixture(autouse=True)
async def exists(world: World) -> None:
    """Ward holds one entry, /exists."""
    await world.put_data("org_admin", "exists", {"n": 1})


async def attempt(world: World, who: str, method: str, path: str) -> int:
    body = {"value": {"n": 2}} if method in ("PUT", "POST", "PATCH") else None
    status, _ = await world.data(who, method, path, json=body)
    return status


# Per caller, towards the data of Ward (an org-level group) when no data path grants the
# right: its admins may do everything (staff with the scope, the org admin and device_boss,
# an org admin; group_admin); who sees Ward is refused (its members, among them member,
# holder through Nurses and device_member; the data holders; those who may read every
# group of the org); the rest do not see it.
NOBODY_ELSE = {
    "staff": "done",
    "staff_unscoped": 403,
    "org_admin": "done",
    "project_admin": 404,
    "role_admin": 404,
    "org_user_perms": 404,
    "org_group_role_perms": 403,
    "org_project_perms": 404,
    "org_device_perms": 404,
    "project_user_perms": 404,
    "project_group_role_perms": 404,
    "project_device_perms": 404,
    "project_reader": 404,
    "project_updater": 404,
    "group_admin": "done",
    "group_user_perms": 403,
    "group_editor": 403,
    "group_device_perms": 403,
    "member": 403,  # group access with no data rights: knows the group
    "holder": 403,
    "owner": 404,
    "plain": 404,  # no access at all: the group is not there for them
    "gemini_user": 404,
    "device_member": 403,
    "device_loner": 404,
    "device_boss": "done",
    "device_plain": 404,
    "other_admin": 404,
    "anonymous": 401,
    "data_reader": 403,
    "data_writer": 403,
    "data_updater": 403,
    "data_deleter": 403,
}
# (method, path): the data holder whose right does it, and the status when it is done.
OPERATIONS = {
    ("GET", "exists"): ("data_reader", 200),
    ("POST", "new"): ("data_writer", 201),
    ("PUT", "new"): ("data_writer", 200),
    ("PUT", "exists"): ("data_updater", 200),  # creating is not overwriting
    ("PATCH", "exists"): ("data_updater", 200),
    ("DELETE", "exists"): ("data_deleter", 200),
}


def rows() -> list[Any]:
    """(method, path, who, status): every caller for each operation, grants and denials."""
    out = []
    for (method, path), (holder, done) in OPERATIONS.items():
        expected = {who: done if s == "done" else s for who, s in NOBODY_ELSE.items()}
        for row in table({**expected, holder: done}, more=DATA_CALLERS):
            who, status = row.values
            out.append(pytest.param(method, path, who, status, id=f"{method}-{path}-{who}"))
    return out


@pytest.mark.parametrize(("method", "path", "who", "status"), rows())
async def test_each_right_next_to_its_denial(
    world: World, method: str, path: str, who: str, status: int
) -> None:
    assert await attempt(world, who, method, path) == status


async def test_a_denied_write_changes_nothing(world: World) -> None:
    assert await attempt(world, "data_writer", "PUT", "exists") == 403
    _, body = await world.data("org_admin", "GET", "exists")
    assert body["data"]["value"] == {"n": 1} and body["data"]["revision"] == 1


GRANTS = {"/": R, "/secret": {}, "/secret/open": R, "/a": {**R, **W}}
PATHS = [
    ("GET", "plain", 200),
    ("GET", "secret", 403),
    ("GET", "secret/x", 403),
    ("GET", "secret/open/x", 200),  # a longer path gives back what a shorter took
    ("GET", "secretive", 200),  # whole segments: /secret does not cover /secretive
    ("POST", "a/new", 201),
    ("POST", "ab", 403),
    ("POST", "plain2", 403),
]


@pytest.mark.parametrize(("method", "path", "status"), PATHS)
async def test_data_paths_match_whole_segments_and_the_longest_decides(
    world: World, method: str, path: str, status: int
) -> None:
    who = await world.data_holder("paths", GRANTS)
    for seeded in ("plain", "secret", "secret/x", "secret/open/x", "secretive"):
        await world.put_data("org_admin", seeded, seeded)
    body = {"value": 1} if method == "POST" else None
    assert (await world.data(who, method, path, json=body))[0] == status


async def test_a_cascade_read_leaves_out_what_the_caller_may_not_read(world: World) -> None:
    who = await world.data_holder("paths", GRANTS)
    for seeded in ("plain", "secret", "secret/x", "secret/open/x", "secretive"):
        await world.put_data("org_admin", seeded, seeded)
    status, body = await world.data(who, "GET", "", params={"cascade": "", "paths_only": ""})
    assert status == 200
    assert body["paths"] == ["/exists", "/plain", "/secret/open/x", "/secretive"]
    status, _ = await world.data(who, "GET", "secret/x", params={"cascade": "true"})
    assert status == 403  # nothing readable there at all


async def test_a_cascade_delete_needs_delete_on_the_whole_subtree(world: World) -> None:
    who = await world.data_holder("pruner", {"/": D, "/keep": {}})
    for seeded in ("keep/a", "drop/a", "drop/b"):
        await world.put_data("org_admin", seeded, 1)
    assert (await world.data(who, "DELETE", "", params={"cascade": "true"}))[0] == 403
    assert (await world.data(who, "DELETE", "drop", params={"cascade": "true"}))[0] == 200
    _, body = await world.data("org_admin", "GET", "", params={"cascade": "", "paths_only": ""})
    assert body["paths"] == ["/exists", "/keep/a"]


async def set_org(world: World, **settings: Any) -> None:
    org_id = world.tenant.org_id
    org = world.site.services.db.read(lambda c: org_store.get(c, org_id))
    assert org is not None
    changes = {"settings": {**org.settings, **settings}}
    await world.site.services.db.write(lambda c: org_store.patch(c, org_id, changes))


@pytest.mark.parametrize(
    ("legacy", "method", "status"),
    [
        (False, "PUT", 403),
        (True, "PUT", 200),  # legacy: can_write overwrites
        (False, "PATCH", 403),
        (True, "PATCH", 200),
    ],
)
async def test_legacy_permissions_let_write_stand_for_update(
    world: World, legacy: bool, method: str, status: int
) -> None:
    await set_org(world, use_legacy_data_and_files_permissions=legacy)
    assert await attempt(world, "data_writer", method, "exists") == status


async def test_legacy_updater_without_write_may_not_change(world: World) -> None:
    await set_org(world, use_legacy_data_and_files_permissions=True)
    assert await attempt(world, "data_updater", "PUT", "exists") == 403


async def require_delete(world: World) -> None:
    group_id = world.org_group_id
    changes = {"require_delete_permission_to_put_data": True}
    await world.site.services.db.write(lambda c: group_store.patch(c, group_id, changes))


@pytest.mark.parametrize(
    ("grants", "method", "status"),
    [
        ({**W}, "POST", 201),  # POST can be granted without the power to overwrite
        ({**W}, "PUT", 403),
        ({**W, **D}, "PUT", 200),
    ],
)
async def test_a_group_requiring_delete_to_put(
    world: World, grants: dict[str, bool], method: str, status: int
) -> None:
    await require_delete(world)
    who = await world.data_holder("creator", {"/": grants})
    assert (await world.data(who, method, "fresh", json={"value": 1}))[0] == status


async def test_the_org_default_also_requires_delete_to_put(world: World) -> None:
    await set_org(world, groups_require_delete_permission_to_put_data_by_default=True)
    assert await attempt(world, "data_writer", "PUT", "fresh") == 403
    assert await attempt(world, "data_writer", "POST", "fresh") == 201


async def test_data_grants_held_through_a_role(world: World) -> None:
    role_id = await world.site.services.roles.create(world.admin, {"name": "Readers"})
    await world.tenant.grant("group", world.org_group_id, role_id, "role", data_paths={"/": R})
    holder = await world.data_holder("role_reader", None)
    await world.tenant.grant("role", role_id, world.id(holder), can_read=True)
    assert (await world.data(holder, "GET", "exists"))[0] == 200
    assert (await world.data(holder, "DELETE", "exists"))[0] == 403


async def test_a_suspended_group_grants_nothing_to_its_members(world: World) -> None:
    group_id = world.org_group_id
    await world.site.services.db.write(
        lambda c: group_store.patch(c, group_id, {"is_active": False})
    )
    assert await attempt(world, "data_reader", "GET", "exists") in (403, 404)
    assert await attempt(world, "org_admin", "GET", "exists") == 200


async def test_a_device_principal_reaches_data_through_its_access(world: World) -> None:
    """Devices arrive with their own branch; the data service asks only for a Principal."""
    device = Principal("device", world.id("device_plain"), None, world.tenant.org_id)
    data = world.site.services.data
    await world.tenant.grant(
        "group", world.org_group_id, device.account_id, "device", data_paths={"/": {**R, **W}}
    )
    await data.post(device, world.org_group_id, "from/device", {"value": {"t": 1}})
    found = await data.get(device, world.org_group_id, "from/device", DataQuery())
    assert found["data"]["created_by"] == device.account_id
    with pytest.raises(Denied):
        await data.delete(device, world.org_group_id, "from/device", cascade=False)
    assert clock.now_iso() >= found["data"]["created_date"]
