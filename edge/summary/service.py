"""Counts within the caller's rights, for the console's overview (docs/console.md).

Each count is the `object_count` of the caller's own list request (GET /v2/users and the
others), so a count never tells more than the list would: it runs the list's permission
scope inside the SQL count. What an organization holds (data entries, files and their
bytes, open tunnels) is counted for its admins only, since reading it is decided path by
path; a count the caller may not see is omitted, never zero.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

from edge.access.engine import Permissions
from edge.accounts.devices import Devices
from edge.accounts.lists import Filters
from edge.accounts.users import Users
from edge.kernel import clock
from edge.kernel.errors import Denied
from edge.kernel.principal import Principal
from edge.tenancy.groups import Groups
from edge.tenancy.orgs import Orgs
from edge.tenancy.projects import Projects
from edge.tenancy.roles import Roles
from storage import summary as store
from storage.database import Database
from storage.listing import ListQuery, Page

COUNT = ListQuery(limit=1, object_count=True)
Counter = Callable[[Principal], Awaitable[Page]]


@dataclass(frozen=True)
class Lists:
    """The list services whose counts the overview shows."""

    orgs: Orgs
    projects: Projects
    users: Users
    groups: Groups
    roles: Roles
    devices: Devices


class Summary:
    def __init__(self, db: Database, permissions: Permissions, lists: Lists) -> None:
        self._db = db
        self._permissions = permissions
        self._counters = _counters(lists)

    async def of(self, principal: Principal) -> dict[str, Any]:
        """Every count this caller may see, by name."""
        out: dict[str, Any] = {}
        if principal.is_staff:
            out["orgs"] = await _count(principal, self._counters["orgs"])
        if principal.org_id is None:
            return out  # staff without a scope: the org's lists need an org
        for name, counter in self._counters.items():
            if name != "orgs":
                out[name] = await _count(principal, counter)
        if principal.is_staff or self._permissions.caller(principal).is_org_admin:
            out.update(await self._content(principal.org_id))
        return {name: value for name, value in out.items() if value is not None}

    async def _content(self, org_id: str) -> dict[str, int]:
        now = clock.now_iso()
        return asdict(await self._db.scan(lambda c: store.org_content(c, org_id, now)))


def _counters(lists: Lists) -> dict[str, Counter]:
    """Each count's list request, as the caller would make it."""
    online = Filters(is_online=True)
    return {
        "orgs": lambda who: lists.orgs.list(who, COUNT),
        "projects": lambda who: lists.projects.list(who, COUNT),
        "users": lambda who: lists.users.list(who, COUNT, Filters()),
        "groups": lambda who: lists.groups.list(who, COUNT),
        "roles": lambda who: lists.roles.list(who, COUNT, None, None),
        "devices": lambda who: lists.devices.list(who, COUNT, Filters()),
        "devices_online": lambda who: lists.devices.list(who, COUNT, online),
    }


async def _count(principal: Principal, counter: Counter) -> int | None:
    """The list's count, or None where the caller may not list it at all."""
    try:
        page = await counter(principal)
    except Denied:
        return None
    return page.total or 0
