"""What a permission check and a list page cost does not grow with what the caller holds.

Cost is counted as SQL work (statements and SQLite virtual-machine steps, see
`Database.counting`), not time: the count is the same on any machine and under any load,
so the comparison between a caller holding a few access objects and one holding thousands
is exact. Timings live in bench/.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from edge.access import holdings
from edge.access.engine import Permissions
from edge.access.standing import GroupStanding
from edge.accounts.device_kind import DEVICE
from edge.accounts.standing import relation
from edge.accounts.user_kind import USER
from edge.app import Site
from edge.kernel.principal import Principal
from storage import devices as device_store
from storage import groups as group_store
from storage import listing, visibility
from storage import roles as role_store
from storage import users as user_store
from storage.listing import ListQuery
from tests.rows import Rows

SMALL, LARGE = 20, 2000
PAGE = ListQuery(limit=10)


def measure(
    site: Site, size: int, question: Callable[[Rows, dict[str, Any]], object]
) -> dict[str, int]:
    """Arrange a caller holding `size` group accesses, then count one question's work."""
    rows = Rows(site)
    rows.org()
    caller_id, member = rows.user(), rows.user()
    groups = rows.groups(size)
    rows.grant_many(
        "group",
        groups,
        caller_id,
        can_read=True,
        is_admin=False,
        user_permissions={"can_read": True},
        role_permissions={"can_read": True},
        device_permissions={"can_read": True},
    )
    rows.grant("group", groups[size // 2], member)
    device = rows.device()
    rows.grant("group", groups[size // 2], device, "device")
    role = rows.role()
    rows.grant("group", groups[size // 2], role, "role")
    arranged = {
        "caller": caller_id,
        "member": member,
        "device": device,
        "group": groups[size // 2],
        "role": role,
    }
    engine = Permissions(site.services.db, cache=False)
    arranged["caller_of"] = lambda: engine.caller(Principal("user", caller_id, "s", rows.org_id))
    with site.services.db.counting() as counts:
        question(rows, arranged)
    return dict(counts)


def point_group(rows: Rows, a: dict[str, Any]) -> object:
    group = rows.db.read(lambda c: group_store.get(c, a["group"]))
    return GroupStanding(a["caller_of"](), group).may("read")


def point_user(rows: Rows, a: dict[str, Any]) -> object:
    caller = a["caller_of"]()
    user = rows.db.read(lambda c: user_store.get(c, a["member"]))
    held = holdings.of_account(rows.db, rows.org_id, a["member"])
    return relation(caller, USER, user, held).read


def point_device(rows: Rows, a: dict[str, Any]) -> object:
    caller = a["caller_of"]()
    device = rows.db.read(lambda c: device_store.get(c, a["device"]))
    held = holdings.of_account(rows.db, rows.org_id, a["device"])
    return relation(caller, DEVICE, device, held).read


def page_of(table: listing.Table, scope: Callable[[Any], tuple[str, tuple[Any, ...]]]) -> Any:
    def ask(rows: Rows, a: dict[str, Any]) -> object:
        caller = a["caller_of"]()
        sql, params = scope(caller)
        where = f"{table.name}.org_id = ? AND {sql}"
        page = rows.db.read(lambda c: listing.fetch(c, table, PAGE, where, (rows.org_id, *params)))
        assert page.rows, "the caller sees something on the page"
        return page

    return ask


QUESTIONS = {
    "a group": point_group,
    "a user": point_user,
    "a device": point_device,
    "a page of groups": page_of(group_store.LIST, lambda c: visibility.groups(c.grantees)),
    "a page of users": page_of(
        user_store.LIST, lambda c: visibility.users(c.principal.account_id, c.grantees)
    ),
    "a page of devices": page_of(
        device_store.LIST, lambda c: visibility.devices(c.principal.account_id, c.grantees)
    ),
    "a page of roles": page_of(
        role_store.LIST, lambda c: visibility.roles(c.principal.account_id, c.grantees)
    ),
}


@pytest.mark.parametrize("name", QUESTIONS)
def test_cost_is_flat_in_the_access_the_caller_holds(site: Site, name: str) -> None:
    small = measure(site, SMALL, QUESTIONS[name])
    large = measure(site, LARGE, QUESTIONS[name])
    assert large["statements"] == small["statements"], (small, large)
    assert large["vm_steps"] <= small["vm_steps"] * 1.1, (small, large)
    assert large["full_scan_steps"] <= small["full_scan_steps"] + 10, (small, large)
