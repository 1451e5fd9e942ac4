"""Who may read and write data: each data right next to its denial, path grants on whole
segments (the longest path decides, both ways), legacy against new permissions,
`require_delete_permission_to_put_data` (the group's flag and the org default), grants
through a role, and a device principal (docs/data.md, "Permissions").
"""

from __future__ import annotations

from typing import Any

import pytest

from edge import clock
from edge.app import Site
from edge.data.query import DataQuery
from edge.errors import Denied
from edge.principal import Principal
from storage import groups as group_store
from storage import orgs as org_store
from tests.api.data_world import DataWorld, data_world
from tests.conftest import Api

R = {"can_read": True}
W = {"can_write": True}
U = {"can_update": True}
D = {"can_delete": True}
CALLERS: dict[str, dict[str, dict[str, bool]] | None] = {
    "reader": {"/": R},
    "writer": {"/": W},
    "updater": {"/": U},
    "deleter": {"/": D},
    "member": {},  # group access, no data rights: knows the group
    "stranger": None,  # no access at all: the group is not there for them
}


@pytest.fixture
async def world(site: Site, api: Api) -> DataWorld:
    world = await data_world(site, api)
    for name, grants in CALLERS.items():
        await world.caller(name, grants)
    await world.put(await world.admin_token(), "exists", {"n": 1})
    return world


async def attempt(world: DataWorld, who: str, method: str, path: str) -> int:
    token = await world.admin_token() if who == "admin" else world.tokens[who]
    body = {"value": {"n": 2}} if method in ("PUT", "POST", "PATCH") else None
    status, _ = await world.call(token, method, path, json=body)
    return status


# (method, path, who, status): every right granted next to its denial.
TABLE = [
    ("GET", "exists", "reader", 200),
    ("GET", "exists", "writer", 403),
    ("GET", "exists", "member", 403),
    ("GET", "exists", "stranger", 404),
    ("GET", "exists", "admin", 200),
    ("POST", "new", "writer", 201),
    ("POST", "new", "reader", 403),
    ("POST", "new", "updater", 403),
    ("POST", "new", "stranger", 404),
    ("PUT", "new", "writer", 200),
    ("PUT", "new", "updater", 403),
    ("PUT", "exists", "updater", 200),
    ("PUT", "exists", "writer", 403),  # creating is not overwriting
    ("PATCH", "exists", "updater", 200),
    ("PATCH", "exists", "writer", 403),
    ("PATCH", "exists", "reader", 403),
    ("DELETE", "exists", "deleter", 200),
    ("DELETE", "exists", "updater", 403),
    ("DELETE", "exists", "stranger", 404),
    ("DELETE", "exists", "admin", 200),
]


@pytest.mark.parametrize(("method", "path", "who", "status"), TABLE)
async def test_each_right_next_to_its_denial(
    world: DataWorld, method: str, path: str, who: str, status: int
) -> None:
    assert await attempt(world, who, method, path) == status


async def test_a_denied_write_changes_nothing(world: DataWorld) -> None:
    assert await attempt(world, "writer", "PUT", "exists") == 403
    _, body = await world.call(await world.admin_token(), "GET", "exists")
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
    world: DataWorld, method: str, path: str, status: int
) -> None:
    token = await world.caller("paths", GRANTS)
    admin = await world.admin_token()
    for seeded in ("plain", "secret", "secret/x", "secret/open/x", "secretive"):
        await world.put(admin, seeded, seeded)
    body = {"value": 1} if method == "POST" else None
    assert (await world.call(token, method, path, json=body))[0] == status


async def test_a_cascade_read_leaves_out_what_the_caller_may_not_read(world: DataWorld) -> None:
    token = await world.caller("paths", GRANTS)
    admin = await world.admin_token()
    for seeded in ("plain", "secret", "secret/x", "secret/open/x", "secretive"):
        await world.put(admin, seeded, seeded)
    status, body = await world.call(token, "GET", "", params={"cascade": "", "paths_only": ""})
    assert status == 200
    assert body["paths"] == ["/exists", "/plain", "/secret/open/x", "/secretive"]
    status, _ = await world.call(token, "GET", "secret/x", params={"cascade": "true"})
    assert status == 403  # nothing readable there at all


async def test_a_cascade_delete_needs_delete_on_the_whole_subtree(world: DataWorld) -> None:
    token = await world.caller("pruner", {"/": D, "/keep": {}})
    admin = await world.admin_token()
    for seeded in ("keep/a", "drop/a", "drop/b"):
        await world.put(admin, seeded, 1)
    assert (await world.call(token, "DELETE", "", params={"cascade": "true"}))[0] == 403
    assert (await world.call(token, "DELETE", "drop", params={"cascade": "true"}))[0] == 200
    _, body = await world.call(admin, "GET", "", params={"cascade": "", "paths_only": ""})
    assert body["paths"] == ["/exists", "/keep/a"]


async def set_org(world: DataWorld, **settings: Any) -> None:
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
    world: DataWorld, legacy: bool, method: str, status: int
) -> None:
    await set_org(world, use_legacy_data_and_files_permissions=legacy)
    assert await attempt(world, "writer", method, "exists") == status


async def test_legacy_updater_without_write_may_not_change(world: DataWorld) -> None:
    await set_org(world, use_legacy_data_and_files_permissions=True)
    assert await attempt(world, "updater", "PUT", "exists") == 403


async def require_delete(world: DataWorld) -> None:
    group_id = world.group_id
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
    world: DataWorld, grants: dict[str, bool], method: str, status: int
) -> None:
    await require_delete(world)
    token = await world.caller("creator", {"/": grants})
    assert (await world.call(token, method, "fresh", json={"value": 1}))[0] == status


async def test_the_org_default_also_requires_delete_to_put(world: DataWorld) -> None:
    await set_org(world, groups_require_delete_permission_to_put_data_by_default=True)
    assert await attempt(world, "writer", "PUT", "fresh") == 403
    assert await attempt(world, "writer", "POST", "fresh") == 201


async def test_data_grants_held_through_a_role(world: DataWorld) -> None:
    role_id = await world.site.services.roles.create(world.admin, {"name": "Readers"})
    await world.tenant.grant("group", world.group_id, role_id, "role", data_paths={"/": R})
    holder = await world.caller("holder", None)
    await world.tenant.grant("role", role_id, world.ids["holder"], can_read=True)
    assert (await world.call(holder, "GET", "exists"))[0] == 200
    assert (await world.call(holder, "DELETE", "exists"))[0] == 403


async def test_a_suspended_group_grants_nothing_to_its_members(world: DataWorld) -> None:
    group_id = world.group_id
    await world.site.services.db.write(
        lambda c: group_store.patch(c, group_id, {"is_active": False})
    )
    assert await attempt(world, "reader", "GET", "exists") in (403, 404)
    assert await attempt(world, "admin", "GET", "exists") == 200


async def test_a_device_principal_reaches_data_through_its_access(world: DataWorld) -> None:
    """Devices arrive with their own branch; the data service asks only for a Principal."""
    device = Principal("device", "devicedevice0001", None, world.tenant.org_id)
    data = world.site.services.data
    await world.tenant.grant(
        "group", world.group_id, device.account_id, "device", data_paths={"/": {**R, **W}}
    )
    await data.post(device, world.group_id, "from/device", {"value": {"t": 1}})
    found = await data.get(device, world.group_id, "from/device", DataQuery())
    assert found["data"]["created_by"] == device.account_id
    with pytest.raises(Denied):
        await data.delete(device, world.group_id, "from/device", cascade=False)
    assert clock.now_iso() >= found["data"]["created_date"]
