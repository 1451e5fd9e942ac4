"""A tenant with groups whose files callers of every standing reach, for the files tests.

Groups: `group` (in project Apollo), `legacy_group` (in project Old, which uses the legacy
data and files permissions) and `strict_group` (in Apollo, requiring delete permission to
put). Callers (the rows of the permission tables), with their `file_paths`:
- staff (signed in with a scope), org_admin, project_admin (of Apollo and Old),
  group_admin (of `group`), other_admin (another org's admin), anonymous;
- reader {/: read}, writer {/: write}, updater {/: update}, deleter {/: delete},
  editor {/: everything} (also in strict_group, with write and update only);
- scoped {/shared: everything, /shared/secret: nothing}: the longest path decides;
- role_holder: holds a role whose group access gives {/: read};
- legacy_writer {/: write} in legacy_group; member: group access without file paths;
- plain: no access to anything.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from yarl import URL

from edge.app import Site, open_site
from edge.auth.tokens import Lifetimes
from edge.config import Config
from edge.principal import Principal
from storage import staff
from tests.conftest import Api, make_config
from tests.tenants import Tenant, new_tenant

EVERYTHING = {"can_read": True, "can_write": True, "can_update": True, "can_delete": True}
NOTHING = {"can_read": False, "can_write": False, "can_update": False, "can_delete": False}
CALLERS = (
    "staff",
    "org_admin",
    "project_admin",
    "group_admin",
    "reader",
    "writer",
    "updater",
    "deleter",
    "editor",
    "scoped",
    "role_holder",
    "member",
    "plain",
    "other_admin",
    "anonymous",
)
ADMINS = ("staff", "org_admin", "project_admin", "group_admin")
PART = 1024  # the smallest multipart part the tests' config allows (the default: 5 MiB)
LIFETIMES = Lifetimes(access=timedelta(hours=1), refresh=timedelta(hours=1))


def only(*rights: str) -> dict[str, bool]:
    return {**NOTHING, **{f"can_{r}": True for r in rights}}


@dataclass
class World:
    site: Site
    api: Api
    tenant: Tenant
    other: Tenant
    project_id: str = ""
    group: str = ""
    legacy_group: str = ""
    strict_group: str = ""
    users: dict[str, str] = field(default_factory=dict)
    folder: Path = Path()

    async def token(self, who: str) -> str | None:
        """A real access token, minted without the slow password check."""
        tokens = self.site.services.tokens
        if who == "anonymous":
            return None
        if who == "staff":
            staff_id = self.site.services.db.read(staff.first)["id"]
            info = await tokens.open_session(
                "staff", staff_id, org_id=self.tenant.org_id, project_id=None, lifetimes=LIFETIMES
            )
            return str(info["access_token"])
        tenant = self.other if who == "other_admin" else self.tenant
        account = {"org_admin": tenant.admin_id, "other_admin": tenant.admin_id}.get(who)
        info = await tokens.open_session(
            "user",
            account or self.users[who],
            org_id=tenant.org_id,
            project_id=None,
            lifetimes=LIFETIMES,
        )
        return str(info["access_token"])

    async def call(self, who: str, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        return await self.api.call(method, path, await self.token(who), **kwargs)

    async def files(
        self, who: str, method: str, path: str, group: str | None = None, **kwargs: Any
    ) -> tuple[int, Any]:
        where = f"/v2/groups/{group or self.group}/files/{path.lstrip('/')}"
        return await self.call(who, method, where, **kwargs)

    async def send(self, url: str, data: bytes, **headers: str) -> tuple[int, str, Any]:
        """PUT bytes to a presigned URL as any HTTP client would: status, ETag, body."""
        body = (
            io.BytesIO(data) if len(data) > 1024 * 1024 else data
        )  # big: no loop-blocking warning
        response = await self.api.client.put(relative(url), data=body, headers=headers)
        body = await response.read()
        return response.status, response.headers.get("ETag", ""), body

    async def fetch(self, url: str, **headers: str) -> tuple[int, bytes, Any]:
        response = await self.api.client.get(relative(url), headers=headers)
        return response.status, await response.read(), response.headers

    async def upload(
        self, who: str, path: str, data: bytes, group: str | None = None, **body: Any
    ) -> tuple[int, Any]:
        """PUT for a URL, then the bytes to it; the status of whichever step failed."""
        status, reply = await self.files(who, "PUT", path, group, json=body)
        if status != 200:
            return status, reply
        status, etag, raw = await self.send(reply["url"], data)
        assert status != 200 or etag == f'"{md5(data)}"', (status, etag)
        return status, raw

    async def stored(self, path: str, group: str | None = None) -> dict[str, Any] | None:
        status, body = await self.files("org_admin", "GET", path, group, params={"info_only": ""})
        if status == 404:
            return None
        assert status == 200, body
        return dict(body["file"])


def blob_paths(world: World, path: str) -> list[Path]:
    """Where a file's bytes are on disk: its blobs, in order."""
    rows = world.site.services.db.read(
        lambda c: c.execute(
            "SELECT b.blob FROM file_blobs b JOIN files f ON f.id = b.file_id"
            " WHERE f.path = ? ORDER BY b.seq",
            (path,),
        ).fetchall()
    )
    return [world.site.services.blobs.path_of(str(r[0])) for r in rows]


def relative(url: str) -> str:
    """The test client takes paths: a presigned URL without its scheme and host."""
    return str(URL(url, encoded=True).raw_path_qs)


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def multipart_etag(parts: list[bytes]) -> str:
    digests = b"".join(hashlib.md5(p).digest() for p in parts)
    return f"{hashlib.md5(digests).hexdigest()}-{len(parts)}"


async def new_project(site: Site, tenant: Tenant, **body: Any) -> str:
    admin = Principal("user", tenant.admin_id, None, tenant.org_id)
    return await site.services.projects.create(admin, {"create_own_access": False, **body})


async def new_group(site: Site, tenant: Tenant, project_id: str, **body: Any) -> str:
    admin = Principal("user", tenant.admin_id, None, tenant.org_id)
    body = {"name": "Files", "create_own_access": False, "project_id": project_id, **body}
    return await site.services.groups.create(admin, body)


async def build_world(site: Site, api: Api) -> World:
    tenant = await new_tenant(site, api)
    other = await new_tenant(site, api, name="Other", alias="other")
    world = World(site, api, tenant, other)
    world.project_id = pid = await new_project(site, tenant, name="Apollo")
    old = await new_project(site, tenant, name="Old", use_legacy_data_and_files_permissions=True)
    world.group = gid = await new_group(site, tenant, pid, name="Scans")
    world.legacy_group = await new_group(site, tenant, old, name="Archive")
    strict = {"require_delete_permission_to_put_data": True}
    world.strict_group = await new_group(site, tenant, pid, name="Strict", **strict)
    await _grant_callers(world, tenant, pid, old, gid)
    return world


async def _grant_callers(world: World, tenant: Tenant, pid: str, old: str, gid: str) -> None:
    async def user(name: str) -> str:
        world.users[name] = await tenant.add_user(name)
        return world.users[name]

    grant = tenant.grant
    admin = await user("project_admin")
    for project in (pid, old):
        await grant("project", project, admin, is_admin=True)
    await grant("group", gid, await user("group_admin"), is_admin=True)
    single = {"reader": "read", "writer": "write", "updater": "update", "deleter": "delete"}
    for name, right in single.items():
        await grant("group", gid, await user(name), file_paths={"/": only(right)})
    await grant("group", gid, await user("editor"), file_paths={"/": EVERYTHING})
    some = {"/": only("read", "write", "update")}
    await grant("group", world.strict_group, world.users["editor"], file_paths=some)
    scoped = {"/shared": EVERYTHING, "/shared/secret": NOTHING}
    await grant("group", gid, await user("scoped"), file_paths=scoped)
    role = await world.site.services.roles.create(
        Principal("user", tenant.admin_id, None, tenant.org_id), {"name": "Viewers"}
    )
    await grant("group", gid, role, "role", file_paths={"/": only("read")})
    await grant("role", role, await user("role_holder"), can_read=True)
    await grant("group", gid, await user("member"))
    legacy = {"/": {"can_read": True, "can_write": True, "can_delete": False}}
    await grant("group", world.legacy_group, await user("legacy_writer"), file_paths=legacy)
    await user("plain")


@pytest.fixture(scope="session")
def files_world_template(template_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> World:
    """The world built once per session in its own data folder; tests get a copy of it."""
    folder = tmp_path_factory.mktemp("files-world") / "data"
    shutil.copytree(template_dir, folder)
    site = open_site(make_config(folder))
    try:  # in a thread of its own: no event loop may be running in this one
        with ThreadPoolExecutor(1) as pool:
            built = pool.submit(asyncio.run, build_world(site, None)).result()  # type: ignore[arg-type]
    finally:
        site.services.db.close()
    built.folder = folder
    return built


@pytest.fixture
def data_dir(files_world_template: World, tmp_path: Path) -> Path:
    """Each test's data folder starts as a copy of the world's."""
    target = tmp_path / "data"
    shutil.copytree(files_world_template.folder, target)
    return target


@pytest.fixture
def config(data_dir: Path) -> Config:
    return make_config(data_dir, files_min_part_bytes=PART)


@pytest.fixture(name="world")
def world_fixture(files_world_template: World, site: Site, api: Api) -> World:
    def moved(tenant: Tenant) -> Tenant:
        return replace(tenant, site=site, api=api)

    return replace(
        files_world_template,
        site=site,
        api=api,
        tenant=moved(files_world_template.tenant),
        other=moved(files_world_template.other),
        users=dict(files_world_template.users),
    )


def table(expected: dict[str, int]) -> list[Any]:
    """A parametrize table over every caller: the status each should get."""
    assert set(expected) == set(CALLERS), set(CALLERS) ^ set(expected)
    return [pytest.param(who, expected[who], id=who) for who in CALLERS]
