"""GET /v2/devices: every filter of the SDK's get_devices, through the shared list engine
(operators, regular expressions, dates, tags, custom attributes, membership, admin
flags), sorting, pages and counts.

The world's devices (tests/world.py: device_member, device_loner, device_boss,
device_plain) plus three made here by Clinic's org admin (`MADE`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest

from storage import devices as device_store
from tests.world import World

MADE = ("alpha", "beta", "gamma")


@pytest.fixture(autouse=True)
async def made(world: World) -> None:
    """Every test here starts with MADE in the world, named in `world.devices`."""
    bodies: dict[str, dict[str, Any]] = {
        "alpha": {
            "manufacturer": "Acme",
            "product": "P-100",
            "site": "Hall A",
            "serial_number": "SN-1",
            "mac_address": "00:11:22:33:44:55",
            "locale": "en-US",
            "zoneinfo": "Europe/Paris",
            "tags": ["a"],
            "custom_attributes": {"floor": 1, "room": "north"},
            "owner_id": world.id("plain"),
            "project_id": world.project_id,
        },
        "beta": {
            "manufacturer": "Bolt",
            "product": "P-200",
            "site": "Hall B",
            "serial_number": "SN-2",
            "mac_address": "AA:BB:CC:DD:EE:FF",
            "locale": "de-DE",
            "tags": ["a", "b"],
            "custom_attributes": {"floor": 2},
        },
        "gamma": {
            "manufacturer": "acme ltd",
            "product": "X-1",
            "site": "Roof",
            "serial_number": "XY-3",
            "locale": "fr-FR",
            "zoneinfo": "Europe/Berlin",
            "tags": ["b"],
            "is_delete_protected": True,
        },
    }
    for name in MADE:
        status, reply = await world.call(
            "org_admin", "POST", "/v2/devices", json={"name": name, **bodies[name]}
        )
        assert status == 201, reply
        world.devices[name] = reply["device"]["id"]


async def names(world: World, query: dict[str, str], who: str = "org_admin") -> list[str]:
    status, body = await world.call(who, "GET", "/v2/devices?" + urlencode(query))
    assert status == 200, body
    by_id = {v: k for k, v in world.devices.items()}
    return [by_id[d["id"]] for d in body["devices"]]


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ({"name": "ALPHA"}, {"alpha"}),
        ({"name_regex": "^(alpha|gamma)$"}, {"alpha", "gamma"}),
        ({"manufacturer": "acme"}, {"alpha"}),
        ({"manufacturer_regex": "^[Aa]cme"}, {"alpha", "gamma"}),
        ({"product": "P-200"}, {"beta"}),
        ({"product_regex": "^P-"}, {"alpha", "beta"}),
        ({"site": "hall b"}, {"beta"}),
        ({"site_regex": "Hall"}, {"alpha", "beta"}),
        ({"serial_number": "SN-1"}, {"alpha"}),
        ({"serial_number_regex": "^SN"}, {"alpha", "beta"}),
        ({"mac_address": "aa:bb:cc:dd:ee:ff"}, {"beta"}),
        ({"mac_address_regex": "^00:"}, {"alpha"}),
        ({"locale": "de-DE"}, {"beta"}),
        ({"locale_regex": "^fr"}, {"gamma"}),
        ({"zoneinfo": "Europe/Paris"}, {"alpha"}),
        ({"zoneinfo_regex": "^Europe/"}, {"alpha", "gamma"}),
        ({"tags": "a,b"}, {"beta"}),
        ({"tags_contains": "b"}, {"beta", "gamma"}),
        ({"tags_contains_any": "a,b"}, {"alpha", "beta", "gamma"}),
        ({"custom_attributes.floor": "2"}, {"beta"}),
        ({"custom_attributes.floor.gte": "1"}, {"alpha", "beta"}),
        ({"is_delete_protected": "true"}, {"gamma"}),
        ({"search": "hall"}, {"alpha", "beta"}),
        ({"search": "north"}, {"alpha"}),  # custom attributes are searched too
        ({"search": "acme", "search_fields": "manufacturer"}, {"alpha", "gamma"}),
    ],
)
async def test_column_filters(world: World, query: dict[str, str], wanted: set[str]) -> None:
    assert set(await names(world, query)) & set(MADE) == wanted


async def test_owner_created_by_and_project_filters(world: World) -> None:
    assert await names(world, {"owner": world.id("plain")}) == ["alpha"]
    assert set(await names(world, {"owner": world.id("owner")})) == {
        "device_member",
        "device_loner",
        "device_boss",
    }
    assert set(await names(world, {"created_by": world.tenant.admin_id})) == set(MADE)
    in_apollo = {"device_member", "device_boss", "alpha"}
    assert set(await names(world, {"project_id": world.project_id})) == in_apollo


async def test_membership_and_admin_filters(world: World) -> None:
    role, ward = await world.new_role(name="Sensors"), world.org_group_id
    await world.grant("role", role, world.devices["beta"], "device")
    await world.grant("project", world.project_id, world.devices["gamma"], "device", is_admin=True)
    await world.grant("group", ward, world.devices["alpha"], "device", is_admin=True)
    assert await names(world, {"role_id": role}) == ["beta"]
    in_ward = {"device_member", "device_boss", "alpha"}
    assert set(await names(world, {"group_id": ward})) == in_ward
    group_admins = {"group_id": ward, "is_group_admin": "true"}
    assert await names(world, group_admins) == ["alpha"]
    assert await names(world, {"is_org_admin": "true"}) == ["device_boss"]
    project_admins = {"project_id": world.project_id, "is_project_admin": "true"}
    assert await names(world, project_admins) == ["gamma"]  # project access is_admin
    status, body = await world.call("org_admin", "GET", "/v2/devices?is_group_admin=true")
    assert (status, body) == (
        400,
        {"message": "is_group_admin: applies only together with group_id"},
    )


async def test_last_seen_ranges(world: World) -> None:
    db = world.site.services.db
    alpha, beta = world.devices["alpha"], world.devices["beta"]
    await db.write(lambda c: device_store.mark_seen(c, [alpha], "2026-03-01T10:00:00.000000Z"))
    await db.write(lambda c: device_store.mark_seen(c, [beta], "2026-03-05T10:00:00.000000Z"))
    assert await names(world, {"last_seen": "2026-03-01"}) == ["alpha"]
    assert await names(world, {"last_seen_gte": "2026-03-02T00:00:00Z"}) == ["beta"]
    assert await names(world, {"last_seen_lte": "2026-03-02"}) == ["alpha"]
    assert await names(world, {"last_seen.gte": "2026-01-01", "order_by": "last_seen"}) == [
        "alpha",
        "beta",
    ]
    status, body = await world.call("org_admin", "GET", f"/v2/devices/{alpha}")
    assert body["device"]["last_seen"] == "2026-03-01T10:00:00.000000Z"


async def test_is_active_is_an_admin_filter(world: World) -> None:
    status, _ = await world.call(
        "org_admin", "PATCH", f"/v2/devices/{world.devices['beta']}", json={"is_active": False}
    )
    assert status == 200
    assert await names(world, {"is_active": "false"}) == ["beta"]
    status, body = await world.call("org_device_perms", "GET", "/v2/devices?is_active=false")
    assert (status, body) == (403, {"message": "is_active: only admins may filter or sort by it"})


async def test_sorting_pages_and_counts(world: World) -> None:
    everything = [
        "alpha",
        "beta",
        "device_boss",
        "device_loner",
        "device_member",
        "device_plain",
        "gamma",
    ]
    assert await names(world, {"order_by": "name"}) == everything
    assert await names(world, {"order_by": "name", "desc": "true"}) == everything[::-1]
    seen: list[str] = []
    query = {"order_by": "name", "limit": "3"}
    while True:
        status, body = await world.call("org_admin", "GET", "/v2/devices?" + urlencode(query))
        assert status == 200 and set(body) <= {"devices", "last_evaluated_key"}
        by_id = {v: k for k, v in world.devices.items()}
        seen += [by_id[d["id"]] for d in body["devices"]]
        if "last_evaluated_key" not in body:
            break
        query["last_evaluated_key"] = str(body["last_evaluated_key"]).replace("'", '"')
    assert seen == everything
    status, body = await world.call(
        "org_admin", "GET", "/v2/devices?object_count=&page_count=&limit=3"
    )
    assert body == {"object_count": 7, "page_count": 3}


async def test_unknown_filters_are_refused(world: World) -> None:
    status, body = await world.call("org_admin", "GET", "/v2/devices?colour=red")
    assert (status, body) == (400, {"message": "colour: is not a query parameter of this list"})
    status, body = await world.call(
        "org_admin", "GET", "/v2/devices?search=x&search_fields=api_key"
    )
    assert status == 400 and body["message"].startswith("search_fields: 'api_key'")


@pytest.mark.parametrize("query", ["search=x&search_fields=bogus", "search_fields=bogus"])
async def test_search_fields_are_checked_as_for_users(world: World, query: str) -> None:
    """One rule for both kinds of account (edge/accounts/lists.py): the fields `search`
    may name, custom attributes among them, with or without `search`."""
    status, body = await world.call("org_admin", "GET", f"/v2/devices?{query}")
    assert status == 400
    assert body["message"].startswith("search_fields: 'bogus' is not searchable (choose from ")
    assert body["message"].endswith(", custom_attributes, restricted_custom_attributes)")
    status, body = await world.call(
        "org_admin", "GET", "/v2/devices?search_fields=custom_attributes"
    )
    assert status == 200, body


async def test_project_sessions_list_their_projects_devices(world: World) -> None:
    token = await world.token("project_admin", project_id=world.project_id)
    status, body = await world.api.call("GET", "/v2/devices", token)
    assert status == 200, body
    listed = {d["id"]: d for d in body["devices"]}
    assert set(listed) == {world.devices[n] for n in ("device_member", "device_boss", "alpha")}
    assert listed[world.devices["device_member"]]["is_project_admin"] is False
