"""A tenant arranged for the device tests: a project, a group, a role, devices in them, and
one caller of every standing towards those devices.

Callers (the rows of the role-by-role tables):
- staff (signed in with scope=<org>), staff_unscoped, anonymous, other_admin (admin of
  another organization), org_admin;
- project_admin (project access is_admin on Ward), group_admin (group access is_admin on
  Team), org_block / project_block / group_block (every `device_permissions` flag at that
  level, not admins);
- owner (a plain user who owns every target device), plain (a user with no access),
  itself (the target device, with its own API key), other_device (another device of the
  org, with no access).

Targets: `member` (home project Ward, member of Team), `loner` (an org-level device in no
group), `boss` (a device that is an org admin, home project Ward, member of Team).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from edge.app import Site
from edge.devices import credentials
from edge.devices.device_writes import new_device
from storage import devices as device_store
from storage.records import Device
from tests.api.user_world import ALL, World, add_group, add_project, add_role, quick_tenant
from tests.conftest import Api

CALLERS = (
    "staff",
    "staff_unscoped",
    "anonymous",
    "other_admin",
    "org_admin",
    "project_admin",
    "group_admin",
    "org_block",
    "project_block",
    "group_block",
    "owner",
    "plain",
    "itself",
    "other_device",
)
TARGETS = ("member", "loner", "boss")


@dataclass
class DeviceWorld(World):
    devices: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)

    async def add_device(self, name: str, **values: Any) -> str:
        """A device written straight to storage (no permissions), with a known API key."""
        key, key_hash = credentials.new_api_key()
        row = new_device(self.tenant.org_id, "", {"name": name, "api_key_hash": key_hash, **values})
        await self.site.services.db.write(lambda c: device_store.create(c, row))
        self.devices[name], self.keys[name] = row.id, key
        return row.id

    def device(self, name: str) -> Device:
        found = self.site.services.db.read(lambda c: device_store.get(c, self.devices[name]))
        assert found is not None
        return found

    async def device_token(self, who: str, target: str) -> str | None:
        """`who`'s bearer: a device's API key for `itself` / `other_device`, else a token."""
        if who == "itself":
            return self.keys[target]
        if who == "other_device":
            return self.keys["bystander"]
        return await self.token(who)

    async def as_(self, who: str, target: str, method: str, path: str, **kw: Any) -> Any:
        return await self.api.call(method, path, await self.device_token(who, target), **kw)


async def build(site: Site, api: Api) -> DeviceWorld:
    tenant = await quick_tenant(site, api, "Clinic", "clinic")
    other = await quick_tenant(site, api, "Other", "other")
    project_id = await add_project(tenant, "Ward")
    group_id = await add_group(tenant, "Team")
    role_id = await add_role(tenant, "Sensors")
    world = DeviceWorld(site, api, tenant, other, project_id, group_id, role_id)
    grant = tenant.grant
    for name, kind, target, values in (
        ("project_admin", "project", project_id, {"is_admin": True}),
        ("group_admin", "group", group_id, {"is_admin": True}),
        ("org_block", "org", tenant.org_id, {"device_permissions": ALL}),
        ("project_block", "project", project_id, {"device_permissions": ALL}),
        ("group_block", "group", group_id, {"device_permissions": ALL}),
    ):
        await world.add_user(name)
        await grant(kind, target, world.id(name), **values)
    await world.add_user("plain")
    owner = await world.add_user("owner")
    await world.add_device("member", project_id=project_id, owner_id=owner)
    await grant("group", group_id, world.devices["member"], "device")
    await world.add_device("loner", owner_id=owner)
    await world.add_device("boss", project_id=project_id, owner_id=owner)
    await grant("org", tenant.org_id, world.devices["boss"], "device", is_admin=True)
    await grant("group", group_id, world.devices["boss"], "device")
    await world.add_device("bystander")
    return world
