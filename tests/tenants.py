"""A tenant: an org with its admin, helpers to add users and sign them in.

A test gets Clinic from the factory's `tenant` fixture (and Other from `other_tenant`,
tests/factory.py), built once per session; `new_tenant` makes one more org where a test
needs an org of its own name. For callers of every standing, see tests/world.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edge.access import values as access_values
from edge.accounts.user_kind import new_user
from edge.app import Site
from edge.auth import hashing
from edge.auth.tokens import Lifetimes
from edge.kernel import clock
from edge.kernel.principal import Kind, Principal
from storage import access as access_store
from storage import staff
from storage import users as user_store
from tests.conftest import Api

PASSWORD = "tenant-password-1"
_HASH: dict[str, str] = {}


def _password_hash() -> str:
    if PASSWORD not in _HASH:  # argon2 is slow on purpose: hash the shared password once
        _HASH[PASSWORD] = hashing.hash_sync(PASSWORD)
    return _HASH[PASSWORD]


@dataclass
class Tenant:
    """An organization with an org admin; helpers to add users and sign them in."""

    site: Site
    api: Api
    org_id: str
    alias: str
    admin_id: str
    admin_email: str

    async def token(self, email: str | None = None, client: str | None = None) -> str:
        return await self.api.token(
            email or self.admin_email, PASSWORD, client_id=client or self.alias
        )

    async def admin_token(self, project_id: str | None = None) -> str:
        """A session of the org admin, minted without the slow password check."""
        return await mint(self.site, "user", self.admin_id, self.org_id, project_id)

    async def add_user(self, username: str, **profile: Any) -> str:
        """A plain user written straight to storage (no permissions), for arranging tests."""
        email = profile.pop("email", f"{username}@{self.alias}.test")
        values = {
            "username": username,
            "email": email,
            "password_hash": _password_hash(),
            "password_last_changed": clock.now_iso(),
            "created_by": None,
            "last_updated_by": None,
            **profile,
        }
        row = new_user(self.org_id, "", values)
        await self.site.services.db.write(lambda c: user_store.create(c, row))
        return row.id

    async def grant(
        self, kind: str, target_id: str, grantee_id: str, grantee_kind: str = "user", **values: Any
    ) -> None:
        """Write an access object straight to storage, for arranging tests."""
        row = access_values.new_access(
            kind, target_id, grantee_id, grantee_kind, self.org_id, self.admin_id, values
        )
        await self.site.services.db.write(lambda c: access_store.create(c, row))


async def new_tenant(site: Site, api: Api, name: str = "Clinic", alias: str = "clinic") -> Tenant:
    owner = site.services.db.read(staff.first)
    email = f"admin@{alias}.test"
    org_id = await site.services.orgs.create(
        Principal("staff", owner["id"], None),
        {"name": name, "alias": alias},
        admin={"email": email, "password": PASSWORD},
    )
    admin = site.services.db.read(lambda c: user_store.find_by_login(c, org_id, email))
    assert admin is not None
    return Tenant(site, api, org_id, alias, str(admin["id"]), email)


async def mint(
    site: Site, kind: Kind, account_id: str, org_id: str | None, project_id: str | None
) -> str:
    """A real access token, from the same session sign-in opens (argon2 is slow on purpose,
    and sign-in itself is tested elsewhere)."""
    info = await site.services.tokens.open_session(
        kind, account_id, org_id=org_id, project_id=project_id, lifetimes=Lifetimes()
    )
    return str(info["access_token"])


def body_of(row: Any, *names: str) -> dict[str, Any]:
    return {n: getattr(row, n) for n in names}
