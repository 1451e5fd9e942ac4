"""A tenant with projects and one caller of every standing, for the project tests' tables.

Callers (their names are the rows of the role-by-role tables):
- staff: staff signed in with `scope=<org>`; staff_unscoped: without a scope;
- org_admin; other_admin (the admin of another organization); anonymous (no token);
- project_admin (direct project access is_admin), role_admin (holds a role whose project
  access is_admin), org_perms (org access with every project_permissions flag),
- reader / updater (project access can_read / can_update only), stranger (no access).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    "org_admin",
    "project_admin",
    "role_admin",
    "org_perms",
    "reader",
    "updater",
    "stranger",
    "other_admin",
    "anonymous",
)
# Who counts as an admin of the project (sees `is_active`).
ADMINS = {"staff", "org_admin", "project_admin", "role_admin"}


@dataclass
class World:
    site: Site
    api: Api
    tenant: Tenant
    other: Tenant
    project_id: str  # "Apollo", alias "apollo": the project the callers hold access to
    second_id: str  # "Gemini": only org-level rights reach it
    other_project_id: str  # a project of the other organization
    role_id: str
    users: dict[str, str] = field(default_factory=dict)

    def email(self, who: str) -> str:
        return f"{who}@{self.tenant.alias}.test"

    async def token(self, who: str, project_id: str | None = None) -> str | None:
        """A token minted for the caller (sign-in itself is tested elsewhere: argon2 is slow)."""
        if who == "anonymous":
            return None
        if who in ("staff", "staff_unscoped"):
            org_id = self.tenant.org_id if who == "staff" else None
            staff_id = self.site.services.db.read(staff.first)["id"]
            return await mint(self.site, "staff", staff_id, org_id, None)
        tenant = self.other if who == "other_admin" else self.tenant
        user_id = tenant.admin_id if who in ("org_admin", "other_admin") else self.users[who]
        return await mint(self.site, "user", user_id, tenant.org_id, project_id)

    async def add_user(self, name: str, **profile: Any) -> str:
        user_id = await self.tenant.add_user(name, email=self.email(name), **profile)
        self.users[name] = user_id
        return user_id

    async def add_role(self, name: str) -> str:
        role_id = ids.new_id()
        now = clock.now_iso()
        row = {
            "id": role_id,
            "org_id": self.tenant.org_id,
            "name": name,
            "name_folded": name.casefold(),
            "created_date": now,
            "last_updated_date": now,
        }
        await self.site.services.db.write(lambda c: insert(c, "roles", row))
        return role_id


async def mint(
    site: Site, kind: Kind, account_id: str, org_id: str | None, project_id: str | None
) -> str:
    info = await site.services.tokens.open_session(
        kind, account_id, org_id=org_id, project_id=project_id, lifetimes=Lifetimes()
    )
    return str(info["access_token"])


async def admin_token(tenant: Tenant, project_id: str | None = None) -> str:
    return await mint(tenant.site, "user", tenant.admin_id, tenant.org_id, project_id)


async def quick_tenant(site: Site, api: Api, name: str = "Clinic", alias: str = "clinic") -> Tenant:
    """Like `new_tenant`, without hashing a new password (the shared hash is reused)."""
    owner = Principal("staff", site.services.db.read(staff.first)["id"], None)
    org_id = await site.services.orgs.create(owner, {"name": name, "alias": alias})
    tenant = Tenant(site, api, org_id, alias, "", f"admin@{alias}.test")
    tenant.admin_id = await tenant.add_user("admin", email=tenant.admin_email)
    row = access_values.org_admin(org_id, tenant.admin_id, owner.actor)
    await site.services.db.write(lambda c: access_store.create(c, row))
    return tenant


async def make_project(site: Site, tenant: Tenant, **body: Any) -> str:
    """A project made by the tenant's org admin, without the creator's own access."""
    admin = Principal("user", tenant.admin_id, None, tenant.org_id)
    return await site.services.projects.create(admin, {"create_own_access": False, **body})


async def build_world(site: Site, api: Api) -> World:
    tenant = await quick_tenant(site, api)
    other = await quick_tenant(site, api, name="Other", alias="other")
    world = World(
        site,
        api,
        tenant,
        other,
        project_id=await make_project(site, tenant, name="Apollo", alias="apollo"),
        second_id=await make_project(site, tenant, name="Gemini"),
        other_project_id=await make_project(site, other, name="Theirs", alias="theirs"),
        role_id="",
    )
    pid = world.project_id
    await tenant.grant("project", pid, await world.add_user("project_admin"), is_admin=True)
    world.role_id = await world.add_role("Project admins")
    await tenant.grant("project", pid, world.role_id, grantee_kind="role", is_admin=True)
    await tenant.grant("role", world.role_id, await world.add_user("role_admin"))
    perms = await world.add_user("org_perms")
    await tenant.grant("org", tenant.org_id, perms, project_permissions=ALL)
    await tenant.grant("project", pid, await world.add_user("reader"), can_read=True)
    await tenant.grant("project", pid, await world.add_user("updater"), can_update=True)
    await world.add_user("stranger")
    return world
