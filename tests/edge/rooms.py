"""The world of the room tests (tests/edge/tenancy, ops, billing, accounts): the services of
a real site on a real SQLite file in the test's own data folder, called directly, with no
HTTP server.

It is the one place these tests build their world (`room`, on the `site` of
tests/conftest.py: a copy of the migrated template folder), so that it can be pointed at
the shared test factory in one place. Services are called as a caller would call them
(a `Principal`); what a test only arranges (a plain user, a device, an access object) is
written straight to storage, as tests/tenants.py does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from edge.access import values as access_values
from edge.accounts.device_kind import new_device
from edge.accounts.user_kind import new_user
from edge.app import Site
from edge.auth.tokens import Lifetimes
from edge.devices import credentials
from edge.kernel import ids
from edge.kernel.errors import Unauthenticated
from edge.kernel.listing import ListQuery
from edge.kernel.principal import Principal
from edge.services import Services
from storage import access as access_store
from storage import devices as device_store
from storage import staff
from storage import users as user_store
from storage.records import AuditEvent

CRUD = {"can_create": True, "can_read": True, "can_update": True, "can_delete": True}


@dataclass
class Room:
    site: Site

    @property
    def services(self) -> Services:
        return self.site.services

    # -- callers -------------------------------------------------------------------------
    def staff(self, org_id: str | None = None) -> Principal:
        """The first staff account, scoped to `org_id` when given."""
        staff_id = self.services.db.read(staff.first)["id"]
        return Principal("staff", str(staff_id), None, org_id)

    @staticmethod
    def user(org_id: str, user_id: str, project_id: str | None = None) -> Principal:
        return Principal("user", user_id, "session", org_id, project_id)

    @staticmethod
    def device(org_id: str, device_id: str) -> Principal:
        return Principal("device", device_id, None, org_id)

    async def session(self, who: Principal) -> str:
        """A real access token of `who` (the session sign-in opens, without the password)."""
        info = await self.services.tokens.open_session(
            who.kind,
            who.account_id,
            org_id=who.org_id,
            project_id=who.project_id,
            lifetimes=Lifetimes(),
        )
        return str(info["access_token"])

    def signed_in(self, token: str) -> bool:
        """Whether a session's token still opens it."""
        try:
            self.services.tokens.verify(token)
        except Unauthenticated:
            return False
        return True

    async def events(self, org_id: str) -> list[AuditEvent]:
        """The audit log of an organization, oldest first, as its scoped staff read it."""
        page = await self.services.audit.list(self.staff(org_id), ListQuery(limit=1000))
        return list(page.rows)

    # -- arranging -----------------------------------------------------------------------
    async def org(self, name: str = "Clinic", **body: Any) -> str:
        """An organization made by staff through the service."""
        return await self.services.orgs.create(self.staff(), {"name": name, **body})

    async def admin(self, org_id: str) -> Principal:
        """A new org admin of `org_id`, signed in to it."""
        user_id = await self.add_user(org_id)
        await self.grant(org_id, "org", org_id, user_id, is_admin=True, can_read=True)
        return self.user(org_id, user_id)

    async def add_user(self, org_id: str, project_id: str | None = None, **values: Any) -> str:
        """A user with no access, written straight to storage."""
        name = values.pop("username", "u" + ids.new_id().lower())
        row = new_user(
            org_id,
            "",
            {"username": name, "email": f"{name}@x.test", "project_id": project_id, **values},
        )
        await self.services.db.write(lambda c: user_store.create(c, row))
        return row.id

    async def add_device(self, org_id: str, project_id: str | None = None, **values: Any) -> str:
        """A device with no access, written straight to storage."""
        _, key_hash = credentials.new_api_key()
        given = {"name": "d" + ids.new_id(), "api_key_hash": key_hash, "project_id": project_id}
        row = new_device(org_id, "", {**given, **values})
        await self.services.db.write(lambda c: device_store.create(c, row))
        return row.id

    async def grant(
        self,
        org_id: str,
        kind: str,
        target_id: str,
        grantee_id: str,
        grantee_kind: str = "user",
        **values: Any,
    ) -> None:
        """An access object written straight to storage (no permission checks)."""
        row = access_values.new_access(
            kind, target_id, grantee_id, grantee_kind, org_id, "", values
        )
        await self.services.db.write(lambda c: access_store.create(c, row))

    async def project(self, admin: Principal, name: str = "Apollo", **body: Any) -> str:
        body = {"name": name, "create_own_access": False, **body}
        return await self.services.projects.create(admin, body)

    async def group(self, admin: Principal, project_id: str | None = None, **body: Any) -> str:
        body = {"name": "Ward", "create_own_access": False, **body}
        if project_id:
            body["project_id"] = project_id
        return await self.services.groups.create(admin, body)

    async def role(self, admin: Principal, project_id: str | None = None, **body: Any) -> str:
        body = {"name": "Nurses", **body}
        if project_id:
            body["project_id"] = project_id
        return await self.services.roles.create(admin, body)


@pytest.fixture
def room(site: Site) -> Room:
    return Room(site)
