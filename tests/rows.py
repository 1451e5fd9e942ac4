"""Rows written straight to storage, the storage-level entry of the test factory
(tests/factory.py): an org, its projects, groups, roles, users and devices, and the access
objects between them, on any site (`site` fixture, or `new_site(folder)`). No interface,
no permission checks: what the engine or a store is asked about is built here exactly as
wanted, thousands of rows in one write where a test needs them (tests/edge/access/test_cost.py).
For a test that needs callers of every standing, see the world (tests/world.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from edge.access import values
from edge.access.engine import Caller
from edge.accounts.device_kind import new_device
from edge.accounts.user_kind import new_user
from edge.app import Site
from edge.devices import credentials
from edge.kernel import clock, ids
from edge.kernel.principal import Principal
from storage import access, devices, groups, orgs, projects, roles, users
from storage.records import Group, Org, Project, Role
from storage.rows import Tx


def _stamps() -> dict[str, Any]:
    now = clock.now_iso()
    return {
        "created_date": now,
        "created_by": None,
        "last_updated_date": now,
        "last_updated_by": None,
    }


@dataclass
class Rows:
    """What is arranged on one site; `org()` first, then the rest belongs to that org."""

    site: Site
    org_id: str = ""
    pending: list[Any] = field(default_factory=list)

    @property
    def db(self) -> Any:
        return self.site.services.db

    def _add(self, write: Any) -> None:
        self.db.write_sync(write)

    def org(self) -> str:
        org = Org(ids.new_id(), "Org", "org", None, "", [], True, False, {}, **_stamps())
        self._add(lambda c: orgs.create(c, org))
        self.org_id = org.id
        return org.id

    def project(self, active: bool = True) -> str:
        p = Project(
            ids.new_id(),
            self.org_id,
            "P " + ids.new_id(),
            "",
            None,
            "",
            [],
            active,
            False,
            {},
            **_stamps(),
        )
        self._add(lambda c: projects.create(c, p))
        return p.id

    def group(self, project_id: str | None = None, active: bool = True) -> str:
        g = Group(
            ids.new_id(),
            self.org_id,
            project_id,
            "G",
            "g",
            "",
            [],
            active,
            False,
            False,
            False,
            10,
            **_stamps(),
        )
        self._add(lambda c: groups.create(c, g))
        return g.id

    def groups(self, count: int, project_id: str | None = None) -> list[str]:
        made = [
            Group(
                ids.new_id(),
                self.org_id,
                project_id,
                "G",
                "g",
                "",
                [],
                True,
                False,
                False,
                False,
                10,
                **_stamps(),
            )
            for _ in range(count)
        ]

        def write(conn: Tx) -> None:
            for g in made:
                groups.create(conn, g)

        self._add(write)
        return [g.id for g in made]

    def role(self, project_id: str | None = None, active: bool = True) -> str:
        r = Role(
            ids.new_id(),
            self.org_id,
            project_id,
            "R",
            "r",
            "",
            [],
            active,
            False,
            {},
            {},
            **_stamps(),
        )
        self._add(lambda c: roles.create(c, r))
        return r.id

    def user(self, project_id: str | None = None) -> str:
        name = "u" + ids.new_id().lower()
        u = new_user(
            self.org_id, "", {"username": name, "email": f"{name}@x.test", "project_id": project_id}
        )
        self._add(lambda c: users.create(c, u))
        return u.id

    def users(self, count: int, project_id: str | None = None) -> list[str]:
        """`count` users in one write (user names `u<id>`, no access)."""
        made = []
        for _ in range(count):
            name = "u" + ids.new_id().lower()
            values = {"username": name, "email": f"{name}@x.test", "project_id": project_id}
            made.append(new_user(self.org_id, "", values))

        def write(conn: Tx) -> None:
            for u in made:
                users.create(conn, u)

        self._add(write)
        return [u.id for u in made]

    def device(self, project_id: str | None = None) -> str:
        _, key_hash = credentials.new_api_key()
        values = {"name": "d" + ids.new_id(), "api_key_hash": key_hash, "project_id": project_id}
        d = new_device(self.org_id, "", values)
        self._add(lambda c: devices.create(c, d))
        return d.id

    def grant(
        self, kind: str, target: str, grantee: str, grantee_kind: str = "user", **given: Any
    ) -> None:
        row = values.new_access(kind, target, grantee, grantee_kind, self.org_id, "", given)
        self._add(lambda c: access.create(c, row))

    def grant_many(self, kind: str, targets: list[str], grantee: str, **given: Any) -> None:
        rows = [
            values.new_access(kind, t, grantee, "user", self.org_id, "", given) for t in targets
        ]

        def write(conn: Tx) -> None:
            for row in rows:
                access.create(conn, row)

        self._add(write)

    def patch_access(self, target: str, grantee: str, **changes: Any) -> None:
        found = self.db.read(lambda c: access.get(c, target, grantee))
        self._add(lambda c: access.patch(c, found.id, changes))

    def caller(self, user_id: str, project_id: str | None = None) -> Caller:
        principal = Principal("user", user_id, "session-" + user_id, self.org_id, project_id)
        return self.site.services.permissions.caller(principal)
