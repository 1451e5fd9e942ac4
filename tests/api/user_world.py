"""A tenant arranged for the user and account tests: a project, a group, a role, and one
caller of every standing towards the users in them.

Callers (the rows of the role-by-role tables):
- staff (signed in with scope=<org>), staff_unscoped, anonymous, other_admin (admin of
  another organization), org_admin;
- project_admin (project access is_admin on Ward), group_admin (group access is_admin on
  Team), org_block / project_block / group_block (full `user_permissions` at that level,
  not admins), plain (no access at all).

Targets: `member` (home project Ward, member of Team), `loner` (an org-level user in no
group), `boss` (an org admin, home project Ward, member of Team).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from edge import clock, ids
from edge.access import values as access_values
from edge.app import Site
from edge.auth.tokens import Lifetimes
from edge.principal import Kind, Principal
from storage import access as access_store
from storage import staff
from storage.rows import insert
from tests.conftest import Api
from tests.tenants import Tenant

ALL = {"can_create": True, "can_read": True, "can_update": True, "can_delete": True}
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
    "plain",
)
TARGETS = ("member", "loner", "boss")


@dataclass
class World:
    site: Site
    api: Api
    tenant: Tenant
    other: Tenant
    project_id: str
    group_id: str
    role_id: str
    users: dict[str, str] = field(default_factory=dict)

    def email(self, who: str) -> str:
        return f"{who}@{self.tenant.alias}.test"

    def id(self, who: str) -> str:
        return self.tenant.admin_id if who == "org_admin" else self.users[who]

    async def token(self, who: str) -> str | None:
        """A token of `who`, minted directly: sign-in itself (slow on purpose) is tested
        elsewhere, and these tokens are the same sessions it opens."""
        if who == "anonymous":
            return None
        if who in ("staff", "staff_unscoped"):
            staff_id = self.site.services.db.read(staff.first)["id"]
            org_id = self.tenant.org_id if who == "staff" else None
            return await self._mint("staff", staff_id, org_id, None)
        if who == "other_admin":
            return await self._mint("user", self.other.admin_id, self.other.org_id, None)
        return await self._mint("user", self.id(who), self.tenant.org_id, None)

    async def project_token(self, who: str, project_id: str | None = None) -> str:
        """A token of `who` signed in to a project's scope."""
        return await self._mint(
            "user", self.id(who), self.tenant.org_id, project_id or self.project_id
        )

    async def _mint(
        self, kind: Kind, account_id: str, org_id: str | None, project_id: str | None
    ) -> str:
        info = await self.site.services.tokens.open_session(
            kind, account_id, org_id=org_id, project_id=project_id, lifetimes=Lifetimes()
        )
        return str(info["access_token"])

    async def add_user(self, name: str, **profile: Any) -> str:
        user_id = await self.tenant.add_user(name, email=self.email(name), **profile)
        self.users[name] = user_id
        return user_id

    async def call(self, who: str, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        return await self.api.call(method, path, await self.token(who), **kwargs)


async def add_row(site: Site, table: str, values: dict[str, Any]) -> str:
    now = clock.now_iso()
    row = {"id": ids.new_id(), "created_date": now, "last_updated_date": now, **values}
    await site.services.db.write(lambda c: insert(c, table, row))
    return str(row["id"])


async def add_project(tenant: Tenant, name: str, **values: Any) -> str:
    return await add_row(
        tenant.site,
        "projects",
        {"org_id": tenant.org_id, "name": name, "name_folded": name.casefold(), **values},
    )


async def add_group(tenant: Tenant, name: str, **values: Any) -> str:
    return await add_row(
        tenant.site,
        "groups",
        {"org_id": tenant.org_id, "name": name, "name_folded": name.casefold(), **values},
    )


async def add_role(tenant: Tenant, name: str, **values: Any) -> str:
    return await add_row(
        tenant.site,
        "roles",
        {"org_id": tenant.org_id, "name": name, "name_folded": name.casefold(), **values},
    )


async def quick_tenant(site: Site, api: Api, name: str, alias: str) -> Tenant:
    """An org and its admin, like tests.tenants.new_tenant but without hashing a password."""
    owner = site.services.db.read(staff.first)
    org_id = await site.services.orgs.create(
        Principal("staff", owner["id"], None), {"name": name, "alias": alias}
    )
    email = f"admin@{alias}.test"
    tenant = Tenant(site, api, org_id, alias, "", email)
    tenant.admin_id = await tenant.add_user(email, email=email)
    row = access_values.org_admin(org_id, tenant.admin_id, owner["id"])
    await site.services.db.write(lambda c: access_store.create(c, row))
    return tenant


async def build(site: Site, api: Api) -> World:
    tenant = await quick_tenant(site, api, "Clinic", "clinic")
    other = await quick_tenant(site, api, "Other", "other")
    project_id = await add_project(tenant, "Ward")
    group_id = await add_group(tenant, "Team")
    role_id = await add_role(tenant, "Nurses")
    world = World(site, api, tenant, other, project_id, group_id, role_id)
    grant = tenant.grant
    await world.add_user("project_admin")
    await grant("project", project_id, world.id("project_admin"), is_admin=True)
    await world.add_user("group_admin")
    await grant("group", group_id, world.id("group_admin"), is_admin=True)
    await world.add_user("org_block")
    await grant("org", tenant.org_id, world.id("org_block"), user_permissions=ALL)
    await world.add_user("project_block")
    await grant("project", project_id, world.id("project_block"), user_permissions=ALL)
    await world.add_user("group_block")
    await grant("group", group_id, world.id("group_block"), user_permissions=ALL)
    await world.add_user("plain")
    await world.add_user("member", project_id=project_id)
    await grant("group", group_id, world.id("member"))
    await world.add_user("loner")
    await world.add_user("boss", project_id=project_id)
    await grant("org", tenant.org_id, world.id("boss"), is_admin=True)
    await grant("group", group_id, world.id("boss"))
    return world


def image_bytes(kind: str, size: tuple[int, int], mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, color="red" if mode != "P" else 1).save(out, kind)
    return out.getvalue()
