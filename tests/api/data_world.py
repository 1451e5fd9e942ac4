"""Arranging data tests: an org with a group, callers holding exactly the data grants a
test names, and a helper to call the data routes with them.

Import from test modules: `from tests.api.data_world import DataWorld, data_world`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import quote

from edge.app import Site
from edge.auth.tokens import Lifetimes
from edge.principal import Principal
from tests.conftest import Api
from tests.tenants import Tenant, new_tenant

LIFETIMES = Lifetimes(access=timedelta(hours=1), refresh=timedelta(hours=1))
ALL = {"can_read": True, "can_write": True, "can_update": True, "can_delete": True}


@dataclass
class DataWorld:
    site: Site
    api: Api
    tenant: Tenant
    group_id: str = ""
    tokens: dict[str, str] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)

    @property
    def admin(self) -> Principal:
        return Principal("user", self.tenant.admin_id, None, self.tenant.org_id)

    async def new_group(self, **body: Any) -> str:
        body = {"name": "Plant", "create_own_access": False, **body}
        return await self.site.services.groups.create(self.admin, body)

    async def token_for(self, account_id: str) -> str:
        info = await self.site.services.tokens.open_session(
            "user", account_id, org_id=self.tenant.org_id, project_id=None, lifetimes=LIFETIMES
        )
        return str(info["access_token"])

    async def caller(
        self, name: str, data_paths: dict[str, dict[str, bool]] | None, group_id: str = ""
    ) -> str:
        """A user holding group access with these data paths (None: no access at all)."""
        account = await self.tenant.add_user(name)
        self.ids[name] = account
        if data_paths is not None:
            await self.tenant.grant(
                "group", group_id or self.group_id, account, data_paths=data_paths
            )
        self.tokens[name] = await self.token_for(account)
        return self.tokens[name]

    async def admin_token(self) -> str:
        if "admin" not in self.tokens:
            self.tokens["admin"] = await self.token_for(self.tenant.admin_id)
        return self.tokens["admin"]

    async def call(
        self, token: str | None, method: str, path: str, group_id: str = "", **kwargs: Any
    ) -> tuple[int, Any]:
        url = f"/v2/groups/{group_id or self.group_id}/data/{quote(path.lstrip('/'), safe='/')}"
        return await self.api.call(method, url, token, **kwargs)

    async def put(self, token: str, path: str, value: Any, **index: Any) -> None:
        status, body = await self.call(token, "PUT", path, json={"value": value, **index})
        assert status == 200, body

    async def bulk(self, token: str | None, body: dict[str, Any]) -> tuple[int, Any]:
        url = f"/v2/groups/{self.group_id}/data"
        return await self.api.call("POST", url, token, json=body)


async def data_world(site: Site, api: Api) -> DataWorld:
    tenant = await new_tenant(site, api)
    world = DataWorld(site, api, tenant)
    world.group_id = await world.new_group()
    return world


async def seed(world: DataWorld, paths: list[str], group_id: str = "", **fields: Any) -> None:
    """Entries written straight through storage (signed as the server signs them): the
    fast path for arranging large groups, as the benchmark does."""
    from dataclasses import replace as _replace

    from edge import clock
    from edge.data.signing import DataSigner
    from storage import data as store
    from storage.data import INDEX_FIELDS, DataEntry

    signer = DataSigner.load_or_create(world.site.services.config.data_dir)
    now, who = clock.now_iso(), world.tenant.admin_id
    gid = group_id or world.group_id

    def entry(path: str) -> DataEntry:
        index = {name: fields.get(name) for name in INDEX_FIELDS}
        made = DataEntry(
            gid,
            path,
            {"p": path},
            **index,
            created_by=who,
            created_date=now,
            last_updated_by=who,
            last_updated_date=now,
            updated_by_list=[who],
            updated_date_list=[now],
            revision=1,
            signature="",
        )
        return _replace(made, signature=signer.sign(made))

    def write(conn: Any) -> None:
        for path in paths:
            store.save(conn, entry(path))

    await world.site.services.db.write(write)
