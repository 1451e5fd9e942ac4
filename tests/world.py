"""The world of the role-by-role tables: one org with a caller of every standing.

The one factory (tests/factory.py) builds it once per session, layer by layer (Clinic,
then Other, then this cast, then the content part), each in a data folder of its own; a
test that asks for the `world` fixture runs on a fresh copy of its layer's folder, so
nothing is shared between tests and no test pays for building it.

The organization "Clinic" (alias `clinic`) holds:

- projects: Apollo (`project_id`, alias `apollo`), the project the cast holds access to;
  Gemini (`second_project_id`), which only org-level rights reach;
- groups: Ward (`org_group_id`, org-level) and Lab (`project_group_id`, in Apollo);
- roles: Nurses (`org_role_id`, org-level, a member of Ward), Technicians
  (`project_role_id`, in Apollo, held by no one) and Project admins (`admin_role_id`,
  org-level, project access `is_admin` on Apollo).

"Other" (alias `other`) is another organization, with its admin and its project Theirs
(`other_project_id`, alias `theirs`).

The callers (`CALLERS`, the rows of every table; each name says what the caller holds):

- staff: staff signed in with `scope=<Clinic>`; staff_unscoped: without a scope;
  anonymous: no token; other_admin: the admin of Other; org_admin: the admin of Clinic;
- project_admin: project access `is_admin` on Apollo; role_admin: holds Project admins,
  so a project admin of Apollo through a role;
- org_user_perms, org_group_role_perms, org_project_perms, org_device_perms: org access
  with every user permission / every group and role permission / every project
  permission / every device permission;
- project_user_perms, project_group_role_perms, project_device_perms: the same blocks in
  project access on Apollo; project_reader, project_updater: project access on Apollo
  with only `can_read` / only `can_update`;
- group_admin: group access `is_admin` on Ward; group_user_perms, group_device_perms:
  group access on Ward with every user / every device permission; group_editor: group
  access on Ward with `can_read`, `can_update` and every role permission; member: group
  access on Ward with nothing else (and Apollo as home project);
- holder: holds Nurses with `can_read` and `can_update`;
- owner: a user with no access, the owner of device_member, device_loner and device_boss;
- plain: a user of Clinic with no access at all; gemini_user: a user whose home project
  is Gemini, with no access;
- device_member, device_loner, device_boss, device_plain: the devices of Clinic
  (`DEVICES`), each calling with its API key: device_member (home project Apollo, a
  member of Ward), device_loner (an org-level device in no group), device_boss (an org
  admin, home project Apollo, a member of Ward), device_plain (an org-level device with
  no access and no owner).

Two more users are targets of the user tables: loner (an org-level user in no group) and
boss (an org admin, home project Apollo, a member of Ward). The devices device_member,
device_loner and device_boss (`DEVICE_TARGETS`), their counterparts, are the targets of
the device tables.

The content of groups (files and data) has holders of its own, who are in the world of
a test marked `@pytest.mark.world("content")` only: this world with its content part,
built once per session on a copy of the world's folder (so that the other tables' lists
of users, groups, projects and roles stay as they are). Its tables hold every caller and
the holders (`FILE_CALLERS`, `DATA_CALLERS`).

Data: Ward holds the data. Holding `data_paths` on Ward: data_reader {/: read},
data_writer {/: write}, data_updater {/: update}, data_deleter {/: delete}; the callers
who are in Ward with no data paths (member, holder, ...) know it is there.

Files: the group Scans (`files_group_id`, in Apollo) holds the files; Strict
(`strict_group_id`, in Apollo) requires delete permission to put; Archive
(`legacy_group_id`) is in the project Old (`legacy_project_id`), which uses the legacy
data and files permissions. Holding
`file_paths` on Scans: file_reader {/: read}, file_writer {/: write}, file_updater
{/: update}, file_deleter {/: delete}, file_editor {/: everything; on Strict: read, write,
update}, file_scoped {/shared: everything, /shared/secret: nothing}; file_role_holder
holds Viewers, a role whose access to Scans gives {/: read}; scans_admin: group access
`is_admin` on Scans; scans_member: group access on Scans with no file paths. One more
user, legacy_writer, holds {/: read, write} on Archive.

Named tables: the questions several resources ask have one table each, built from
`org_admins_and(*holders)` and `in_apollo(table, *holders)` (who may create a group or a
role, a user, a device, a project; who may change the org). A question only one
resource asks keeps its table in that resource's test module.

Tunnels: `device_owners_can_tunnel` is off in Clinic and in its projects (the default),
so `owner` only reads the tunnels of its devices until a test turns it on. A test that
reads what the tunnels tell a device calls `keep_notices()`: the notices are then kept
instead of going out over MQTT; `open_tunnel()` opens one, and `destination_token()` asks
for its device end's token as the device does.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import pytest

from edge.accounts.device_kind import new_device
from edge.app import Site
from edge.devices import credentials
from edge.kernel.principal import Principal
from storage import devices as device_store
from storage import staff
from storage.records import Device
from tests.conftest import Api
from tests.files import md5, relative
from tests.tenants import Tenant, mint, new_tenant

T = TypeVar("T")
ALL = {"can_create": True, "can_read": True, "can_update": True, "can_delete": True}
NONE = {"can_create": False, "can_read": False, "can_update": False, "can_delete": False}
CALLERS = (
    "staff",
    "staff_unscoped",
    "org_admin",
    "project_admin",
    "role_admin",
    "org_user_perms",
    "org_group_role_perms",
    "org_project_perms",
    "org_device_perms",
    "project_user_perms",
    "project_group_role_perms",
    "project_device_perms",
    "project_reader",
    "project_updater",
    "group_admin",
    "group_user_perms",
    "group_editor",
    "group_device_perms",
    "member",
    "holder",
    "owner",
    "plain",
    "gemini_user",
    "device_member",
    "device_loner",
    "device_boss",
    "device_plain",
    "other_admin",
    "anonymous",
)
DEVICES = ("device_member", "device_loner", "device_boss", "device_plain")  # API-key callers
TARGETS = ("member", "loner", "boss")  # the users the user tables act on
DEVICE_TARGETS = ("device_member", "device_loner", "device_boss")  # and the devices
PROJECT_ADMINS = {"staff", "org_admin", "project_admin", "role_admin", "device_boss"}  # of Apollo
FILE_CALLERS = (  # of the content part: more rows for the files tables
    "scans_admin",
    "file_reader",
    "file_writer",
    "file_updater",
    "file_deleter",
    "file_editor",
    "file_scoped",
    "file_role_holder",
    "scans_member",
)
DATA_CALLERS = ("data_reader", "data_writer", "data_updater", "data_deleter")  # and data
EVERYTHING = {"can_read": True, "can_write": True, "can_update": True, "can_delete": True}
NOTHING = {"can_read": False, "can_write": False, "can_update": False, "can_delete": False}


ORG_ADMINS = ("staff", "org_admin", "device_boss", "other_admin")  # other_admin: of Other


def org_admins_and(*holders: str, ok: int = 201) -> dict[str, int]:
    """A caller table where the org admins (staff scoped to Clinic, Clinic's admin,
    device_boss; Other's admin in Other) and `holders` may (`ok`), anyone else signed in
    may not (403), and anonymous is asked to sign in (401)."""
    may = dict.fromkeys((*ORG_ADMINS, *holders), ok)
    return {**dict.fromkeys(CALLERS, 403), **may, "anonymous": 401}


def in_apollo(org_level: Mapping[str, int], *holders: str) -> dict[str, int]:
    """The same question asked in Apollo: its project admins (project_admin, role_admin)
    and `holders` may too, and Other's admin gets 400 (Apollo is not a project of Other)."""
    ok = org_level["org_admin"]
    may = dict.fromkeys(("project_admin", "role_admin", *holders), ok)
    return {**org_level, **may, "other_admin": 400}


# Named tables, one per question several resources ask (tests/api/test_<resource>.py).
# Who may create, org-level and in Apollo: each kind by the holders of its permissions.
GROUP_AND_ROLE_CREATORS = org_admins_and("org_group_role_perms")
GROUP_AND_ROLE_CREATORS_IN_APOLLO = in_apollo(GROUP_AND_ROLE_CREATORS, "project_group_role_perms")
USER_CREATORS = org_admins_and("org_user_perms")
USER_CREATORS_IN_APOLLO = in_apollo(USER_CREATORS, "project_user_perms")
DEVICE_CREATORS = org_admins_and("org_device_perms")
DEVICE_CREATORS_IN_APOLLO = in_apollo(DEVICE_CREATORS, "project_device_perms")
PROJECT_CREATORS = org_admins_and("org_project_perms")
ADMIN_CREATORS = org_admins_and()  # what no block of permissions reaches (email templates)
ADMIN_CREATORS_IN_APOLLO = in_apollo(ADMIN_CREATORS)
ORG_CHANGERS = org_admins_and(ok=200)  # who may change their own organization
# Who may read, change and delete what only admins of an org and its projects manage, when
# it is Apollo's (e-mail templates, provisioning claims): Apollo's admins; other admins in
# Clinic and everyone else do not see it (404).
APOLLO_ADMIN_RESOURCE = {
    **dict.fromkeys(ADMIN_CREATORS, 404),
    "staff": 200,
    "staff_unscoped": 403,
    "org_admin": 200,
    "project_admin": 200,
    "role_admin": 200,
    "device_boss": 200,
    "anonymous": 401,
}


# Who may read Apollo: its standing's read (any project access makes it known: 403, not 404).
# One rule for the project (test_projects) and for the access objects on it
# (test_project_access): those are read by who may read the project, its admins and the
# grantee, and here its admins and the grantee read the project anyway.
PROJECT_READERS = {
    "staff": 200,
    "staff_unscoped": 403,
    "org_admin": 200,
    "project_admin": 200,
    "role_admin": 200,
    "org_user_perms": 404,
    "org_group_role_perms": 404,
    "org_project_perms": 200,
    "org_device_perms": 404,
    "project_user_perms": 403,  # any project access makes the project known
    "project_group_role_perms": 403,
    "project_device_perms": 403,
    "project_reader": 200,
    "project_updater": 403,  # update never needs read: they know the project, but may not read it
    "group_admin": 404,
    "group_user_perms": 404,
    "group_editor": 404,
    "group_device_perms": 404,
    "member": 404,  # a home project is not access to it
    "holder": 404,
    "owner": 404,
    "plain": 404,
    "gemini_user": 404,
    "device_member": 404,
    "device_loner": 404,
    "device_boss": 200,
    "device_plain": 404,
    "other_admin": 404,
    "anonymous": 401,
}
# Who acts as Apollo's admin (its standing's admin): who manages its access
# (test_project_access) and who may force its delete (test_projects). Org-level project
# permissions read a project, but do not make its admin.
PROJECT_ADMIN_ONLY = {**PROJECT_READERS, "org_project_perms": 403, "project_reader": 403}
# Who may read the org-level role Nurses: the role's read rule, for the role (test_roles)
# and for the access objects on it (test_role_access), read as the project's are above.
ORG_ROLE_READERS = {
    "staff": 200,
    "staff_unscoped": 403,
    "org_admin": 200,
    "project_admin": 404,
    "role_admin": 404,
    "org_user_perms": 404,
    "org_group_role_perms": 200,
    "org_project_perms": 404,
    "org_device_perms": 404,
    "project_user_perms": 404,
    "project_group_role_perms": 404,
    "project_device_perms": 404,
    "project_reader": 404,
    "project_updater": 404,
    "group_admin": 200,  # the role is a member of their group
    "group_user_perms": 404,
    "group_editor": 200,  # role_permissions in a group the role is in
    "group_device_perms": 404,
    "member": 404,
    "holder": 200,  # holds it with can_read (and the access read is their own)
    "owner": 404,
    "plain": 404,
    "gemini_user": 404,
    "device_member": 404,
    "device_loner": 404,
    "device_boss": 200,
    "device_plain": 404,
    "other_admin": 404,
    "anonymous": 401,
}


def only(*rights: str) -> dict[str, bool]:
    """File (or data) path rights: these, and no other."""
    return {**NOTHING, **{f"can_{r}": True for r in rights}}


def table(
    expected: Mapping[str, T],
    *,
    not_applicable: tuple[str, ...] = (),
    more: tuple[str, ...] = (),
) -> list[Any]:
    """A parametrize table over every caller, (who, expected): a row for each, no fewer.

    A caller the question cannot be asked of (staff signing in with a password, say) is
    named in `not_applicable`, so that leaving a row out is always a decision. `more` adds
    callers a table must also hold (the content tables: FILE_CALLERS, DATA_CALLERS).
    """
    callers = (*CALLERS, *more)
    named = set(expected) | set(not_applicable)
    assert named == set(callers) and not set(expected) & set(not_applicable), set(callers) ^ named
    return [pytest.param(who, expected[who], id=who) for who in callers if who in expected]


def target_table(
    expected: Mapping[str, tuple[T, T, T]], targets: tuple[str, str, str] = TARGETS
) -> list[Any]:
    """(who, target, expected) rows: a caller table holding one value per target, in the
    order of `targets` (the users of TARGETS, or the devices of DEVICE_TARGETS), crossed
    with those targets."""
    return [
        pytest.param(who, target, statuses[i], id=f"{who}-{target}")
        for who, statuses in ((row.values[0], row.values[1]) for row in table(expected))
        for i, target in enumerate(targets)
    ]


@dataclass
class Notices:
    """What the tunnels tell devices, kept instead of going out over MQTT."""

    sent: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, device_id: str, topic: str, payload: bytes) -> int:
        self.sent.append((device_id, topic, json.loads(payload)))
        return 1


@dataclass
class World:
    site: Site
    api: Api | None
    tenant: Tenant  # Clinic
    other_org: Tenant | None  # Other (None in the factory's clinic layer)
    project_id: str = ""
    second_project_id: str = ""
    other_project_id: str = ""
    org_group_id: str = ""
    project_group_id: str = ""
    org_role_id: str = ""
    project_role_id: str = ""
    admin_role_id: str = ""
    legacy_project_id: str = ""  # Old
    files_group_id: str = ""  # Scans
    strict_group_id: str = ""  # Strict
    legacy_group_id: str = ""  # Archive
    viewer_role_id: str = ""  # Viewers
    users: dict[str, str] = field(default_factory=dict)
    devices: dict[str, str] = field(default_factory=dict)  # device IDs by name
    keys: dict[str, str] = field(default_factory=dict)  # their API keys
    folder: Path = Path()

    # -- who is who ------------------------------------------------------------------------
    def id(self, who: str) -> str:
        """The user ID (or the device ID) of a caller or target."""
        if who == "org_admin":
            return self.tenant.admin_id
        if who == "other_admin":
            return self.other.admin_id
        if who in self.devices:
            return self.devices[who]
        return self.users[who]

    def email(self, who: str) -> str:
        if who == "org_admin":
            return self.tenant.admin_email
        if who == "other_admin":
            return self.other.admin_email
        return f"{who}@{self.tenant.alias}.test"

    @property
    def other(self) -> Tenant:
        """Other, the second organization (every layer but the factory's first has it)."""
        assert self.other_org is not None, "this world holds Clinic alone"
        return self.other_org

    @property
    def admin(self) -> Principal:
        """Clinic's org admin, for arranging through the services."""
        return Principal("user", self.tenant.admin_id, None, self.tenant.org_id)

    def device(self, name: str) -> Device:
        """A device's row as stored now."""
        found = self.site.services.db.read(lambda c: device_store.get(c, self.devices[name]))
        assert found is not None, name
        return found

    # -- tokens and calls ------------------------------------------------------------------
    async def token(self, who: str, project_id: str | None = None) -> str | None:
        """A real access token of `who`, minted without the slow password check (sign-in
        itself is tested elsewhere; these are the same sessions it opens); a device's
        bearer is its API key."""
        if who == "anonymous":
            return None
        if who in self.keys:
            assert project_id is None, "a device has no project sessions"
            return self.keys[who]
        if who in ("staff", "staff_unscoped"):
            staff_id = self.site.services.db.read(staff.first)["id"]
            org_id = self.tenant.org_id if who == "staff" else None
            return await mint(self.site, "staff", staff_id, org_id, None)
        org = self.other if who == "other_admin" else self.tenant
        return await mint(self.site, "user", self.id(who), org.org_id, project_id)

    async def call(self, who: str, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        assert self.api is not None, "this world has no HTTP client (the SDK is the client)"
        return await self.api.call(method, path, await self.token(who), **kwargs)

    # -- arranging more ----------------------------------------------------------------------
    async def add_user(self, name: str, **profile: Any) -> str:
        """A user of Clinic with no access (username `name`), written straight to storage."""
        user_id = await self.tenant.add_user(name, email=self.email(name), **profile)
        self.users[name] = user_id
        return user_id

    async def add_device(self, name: str, **values: Any) -> str:
        """A device of Clinic with no access and a known API key, written straight to
        storage."""
        key, key_hash = credentials.new_api_key()
        stamps = {"created_by": None, "last_updated_by": None}
        row = new_device(
            self.tenant.org_id, "", {"name": name, "api_key_hash": key_hash, **stamps, **values}
        )
        await self.site.services.db.write(lambda c: device_store.create(c, row))
        self.devices[name], self.keys[name] = row.id, key
        return row.id

    async def grant(
        self, kind: str, target_id: str, grantee_id: str, grantee_kind: str = "user", **values: Any
    ) -> None:
        await self.tenant.grant(kind, target_id, grantee_id, grantee_kind, **values)

    async def new_project(self, **body: Any) -> str:
        """A project of Clinic made by its org admin, without the creator's own access."""
        return await new_project(self.site, self.tenant, **body)

    async def new_group(self, project_id: str | None = None, **body: Any) -> str:
        body = {"name": "Team", "create_own_access": False, **body}
        if project_id:
            body["project_id"] = project_id
        return await self.site.services.groups.create(self.admin, body)

    async def new_role(self, project_id: str | None = None, **body: Any) -> str:
        body = {"name": "Nurses", **body}
        if project_id:
            body["project_id"] = project_id
        return await self.site.services.roles.create(self.admin, body)

    # -- files -------------------------------------------------------------------------------
    async def files(
        self, who: str, method: str, path: str, group: str | None = None, **kwargs: Any
    ) -> tuple[int, Any]:
        """A call to the files of a group (Scans unless told)."""
        where = f"/v2/groups/{group or self.files_group_id}/files/{path.lstrip('/')}"
        return await self.call(who, method, where, **kwargs)

    async def send(self, url: str, data: bytes, **headers: str) -> tuple[int, str, Any]:
        """PUT bytes to a presigned URL as any HTTP client would: status, ETag, body."""
        assert self.api is not None
        big = len(data) > 1024 * 1024  # streamed: no loop-blocking warning
        response = await self.api.client.put(
            relative(url), data=io.BytesIO(data) if big else data, headers=headers
        )
        body = await response.read()
        return response.status, response.headers.get("ETag", ""), body

    async def fetch(self, url: str, **headers: str) -> tuple[int, bytes, Any]:
        """GET a presigned URL: status, bytes, headers."""
        assert self.api is not None
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
        """A file's info as the org admin reads it, or None when there is none."""
        status, body = await self.files("org_admin", "GET", path, group, params={"info_only": ""})
        if status == 404:
            return None
        assert status == 200, body
        return dict(body["file"])

    # -- data --------------------------------------------------------------------------------
    async def data(
        self, who: str, method: str, path: str, group: str | None = None, **kwargs: Any
    ) -> tuple[int, Any]:
        """A call to the data of a group (Ward unless told) at `path`."""
        where = f"/v2/groups/{group or self.org_group_id}/data/{quote(path.lstrip('/'), safe='/')}"
        return await self.call(who, method, where, **kwargs)

    async def put_data(
        self, who: str, path: str, value: Any, group: str | None = None, **index: Any
    ) -> None:
        status, body = await self.data(who, "PUT", path, group, json={"value": value, **index})
        assert status == 200, body

    async def bulk_data(
        self, who: str, body: dict[str, Any], group: str | None = None
    ) -> tuple[int, Any]:
        """A bulk request to the data of a group (Ward unless told)."""
        return await self.call(
            who, "POST", f"/v2/groups/{group or self.org_group_id}/data", json=body
        )

    async def data_holder(
        self, name: str, data_paths: dict[str, dict[str, bool]] | None, group: str | None = None
    ) -> str:
        """A user of Clinic holding group access (to Ward unless told) with these data
        paths (None: no access at all); its name, to call as."""
        user_id = await self.add_user(name)
        if data_paths is not None:
            await self.grant("group", group or self.org_group_id, user_id, data_paths=data_paths)
        return name

    # -- tunnels -----------------------------------------------------------------------------
    def keep_notices(self) -> Notices:
        """Keep the notices the tunnels send to devices on this test's site, unsent. Call it
        once the app is made (making it sets where the notices go)."""
        kept = Notices()
        self.site.services.tunnels.notify = kept
        return kept

    async def open_tunnel(
        self, who: str = "org_admin", target: str = "device_member", **body: Any
    ) -> dict[str, Any]:
        """A tunnel to `target` opened by `who` over HTTP (SSH and HTTP unless told)."""
        body = {"services": ["SSH", "HTTP"], **body}
        path = f"/v2/devices/{self.id(target)}/tunnels"
        status, reply = await self.call(who, "POST", path, json=body)
        assert status == 201, reply
        return dict(reply["tunnel"])

    async def destination_token(self, tunnel_id: str, device: str = "device_member") -> str:
        """The device end's token of a tunnel, asked for as the device does (with its API
        key, at the `token_url` its notice names)."""
        path = f"/v2/tunnels/{tunnel_id}/agent/token"
        status, body = await self.call(device, "POST", path)
        assert status == 201, body
        return str(body["destination_token"])

    def bound(self, site: Site, api: Api | None) -> World:
        """This world on a test's own site (its copy of the data folder)."""
        return replace(
            self,
            site=site,
            api=api,
            tenant=replace(self.tenant, site=site, api=api),  # type: ignore[arg-type]
            other_org=self.other_org and replace(self.other_org, site=site, api=api),  # type: ignore[arg-type]
            users=dict(self.users),
            devices=dict(self.devices),
            keys=dict(self.keys),
        )


async def new_project(site: Site, tenant: Tenant, **body: Any) -> str:
    admin = Principal("user", tenant.admin_id, None, tenant.org_id)
    return await site.services.projects.create(admin, {"create_own_access": False, **body})


async def build_clinic(site: Site) -> World:
    """The clinic layer: Clinic with its admin, and nothing else."""
    tenant = await new_tenant(site, None)  # type: ignore[arg-type]  # bound per test
    return World(site, None, tenant, None)


async def with_other(world: World) -> World:
    """The orgs layer: Other, with its admin, beside Clinic."""
    other = await new_tenant(world.site, None, name="Other", alias="other")  # type: ignore[arg-type]
    return replace(world, other_org=other)


async def with_cast(world: World) -> World:
    """The cast layer on the orgs: targets, users and devices (see the module's docstring)."""
    await _targets(world)
    await _cast(world)
    await _devices(world)
    return world


async def with_content(world: World) -> World:
    """The world with its content part: the holders of files and data (see the module's
    docstring)."""
    await _files(world)
    await _data(world)
    return world


async def _targets(world: World) -> None:
    world.project_id = await world.new_project(name="Apollo", alias="apollo")
    world.second_project_id = await world.new_project(name="Gemini")
    world.other_project_id = await new_project(
        world.site, world.other, name="Theirs", alias="theirs"
    )
    world.org_group_id = await world.new_group(name="Ward")
    world.project_group_id = await world.new_group(world.project_id, name="Lab")
    world.org_role_id = await world.new_role(name="Nurses")
    world.project_role_id = await world.new_role(world.project_id, name="Technicians")
    world.admin_role_id = await world.new_role(name="Project admins")
    await world.grant("group", world.org_group_id, world.org_role_id, "role")
    await world.grant("project", world.project_id, world.admin_role_id, "role", is_admin=True)


Holding = tuple[str, str, dict[str, Any]]  # (kind of access, target ID, its values)


def _holdings(world: World) -> dict[str, list[Holding]]:
    """Who holds what: every user of the world, in the order they are made."""
    org, apollo, ward = world.tenant.org_id, world.project_id, world.org_group_id
    groups_and_roles = {"group_permissions": ALL, "role_permissions": ALL}
    devices = {"device_permissions": ALL}
    return {
        "project_admin": [("project", apollo, {"is_admin": True})],
        "role_admin": [("role", world.admin_role_id, {})],
        "org_user_perms": [("org", org, {"user_permissions": ALL})],
        "org_group_role_perms": [("org", org, groups_and_roles)],
        "org_project_perms": [("org", org, {"project_permissions": ALL})],
        "org_device_perms": [("org", org, devices)],
        "project_user_perms": [("project", apollo, {"user_permissions": ALL})],
        "project_group_role_perms": [("project", apollo, groups_and_roles)],
        "project_device_perms": [("project", apollo, devices)],
        "project_reader": [("project", apollo, {"can_read": True})],
        "project_updater": [("project", apollo, {"can_update": True})],
        "group_admin": [("group", ward, {"is_admin": True})],
        "group_user_perms": [("group", ward, {"user_permissions": ALL})],
        "group_editor": [
            ("group", ward, {"can_read": True, "can_update": True, "role_permissions": ALL})
        ],
        "group_device_perms": [("group", ward, devices)],
        "member": [("group", ward, {})],
        "holder": [("role", world.org_role_id, {"can_read": True, "can_update": True})],
        "owner": [],
        "plain": [],
        "gemini_user": [],
        "loner": [],
        "boss": [("org", org, {"is_admin": True}), ("group", ward, {})],
    }


def _home_projects(world: World) -> dict[str, str]:
    """Users who belong to a project (the rest are org-level users)."""
    apollo = world.project_id
    return {"member": apollo, "boss": apollo, "gemini_user": world.second_project_id}


async def _cast(world: World) -> None:
    homes = _home_projects(world)
    for name, holdings in _holdings(world).items():
        profile = {"project_id": homes[name]} if name in homes else {}
        user_id = await world.add_user(name, **profile)
        for kind, target_id, values in holdings:
            await world.grant(kind, target_id, user_id, **values)


def _device_holdings(world: World) -> dict[str, tuple[dict[str, Any], list[Holding]]]:
    """The devices of the world: their columns and what they hold, in the order made."""
    org, apollo, ward = world.tenant.org_id, world.project_id, world.org_group_id
    owned = {"owner_id": world.id("owner")}
    return {
        "device_member": ({"project_id": apollo, **owned}, [("group", ward, {})]),
        "device_loner": (owned, []),
        "device_boss": (
            {"project_id": apollo, **owned},
            [("org", org, {"is_admin": True}), ("group", ward, {})],
        ),
        "device_plain": ({}, []),
    }


async def _devices(world: World) -> None:
    for name, (values, holdings) in _device_holdings(world).items():
        device_id = await world.add_device(name, **values)
        for kind, target_id, access in holdings:
            await world.grant(kind, target_id, device_id, "device", **access)


async def _files(world: World) -> None:
    world.legacy_project_id = await world.new_project(
        name="Old", use_legacy_data_and_files_permissions=True
    )
    world.files_group_id = scans = await world.new_group(world.project_id, name="Scans")
    world.strict_group_id = await world.new_group(
        world.project_id, name="Strict", require_delete_permission_to_put_data=True
    )
    world.legacy_group_id = await world.new_group(world.legacy_project_id, name="Archive")
    world.viewer_role_id = await world.new_role(name="Viewers")
    await world.grant("group", scans, world.viewer_role_id, "role", file_paths={"/": only("read")})
    legacy = {"can_read": True, "can_write": True, "can_delete": False}  # update: unsaid
    holdings: dict[str, list[Holding]] = {
        "scans_admin": [("group", scans, {"is_admin": True})],
        "file_reader": [("group", scans, {"file_paths": {"/": only("read")}})],
        "file_writer": [("group", scans, {"file_paths": {"/": only("write")}})],
        "file_updater": [("group", scans, {"file_paths": {"/": only("update")}})],
        "file_deleter": [("group", scans, {"file_paths": {"/": only("delete")}})],
        "file_editor": [
            ("group", scans, {"file_paths": {"/": EVERYTHING}}),
            (
                "group",
                world.strict_group_id,
                {"file_paths": {"/": only("read", "write", "update")}},
            ),
        ],
        "file_scoped": [
            ("group", scans, {"file_paths": {"/shared": EVERYTHING, "/shared/secret": NOTHING}})
        ],
        "file_role_holder": [("role", world.viewer_role_id, {"can_read": True})],
        "scans_member": [("group", scans, {})],
        "legacy_writer": [("group", world.legacy_group_id, {"file_paths": {"/": legacy}})],
    }
    for name, held in holdings.items():
        user_id = await world.add_user(name)
        for kind, target_id, values in held:
            await world.grant(kind, target_id, user_id, **values)


async def _data(world: World) -> None:
    rights = ("can_read", "can_write", "can_update", "can_delete")  # one each, others unsaid
    for name, right in zip(DATA_CALLERS, rights, strict=True):
        await world.data_holder(name, {"/": {right: True}})
