"""Billing points over raw HTTP (the public SDK has no billing operation): staff grants
beside every non-staff denial, ledger arithmetic, filters and pages, bad input, and the
meter's periodic debit from metered usage (docs/billing.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from edge.accounts.device_kind import new_device
from edge.app import Site
from edge.devices import credentials
from edge.kernel import clock
from edge.kernel.principal import Principal
from storage import devices as device_store
from storage import staff
from tests.conftest import Api
from tests.files import relative
from tests.tenants import Tenant, mint
from tests.world import CALLERS, World, table

GIB = 1 << 30


@dataclass
class Org:
    tenant: Tenant
    staff: str  # a staff token without an org scope
    base: str

    @property
    def id(self) -> str:
        return self.tenant.org_id


async def staff_token(site: Site, org_id: str | None = None) -> str:
    staff_id = site.services.db.read(staff.first)["id"]
    return await mint(site, "staff", staff_id, org_id, None)


@pytest.fixture
async def org(site: Site, tenant: Tenant) -> Org:
    token = await staff_token(site)
    return Org(tenant, token, f"/v2/orgs/{tenant.org_id}/billing-points")


async def add_device(site: Site, org_id: str, name: str) -> str:
    """A device with a known API key, written straight to storage; returns the key."""
    key, key_hash = credentials.new_api_key()
    row = new_device(org_id, "", {"name": name, "api_key_hash": key_hash})
    await site.services.db.write(lambda c: device_store.create(c, row))
    return key


async def post(api: Api, org: Org, points: Any, **body: Any) -> tuple[int, Any]:
    return await api.call("POST", org.base, org.staff, json={"points": points, **body})


async def credit(api: Api, org: Org, points: int, **body: Any) -> dict[str, Any]:
    status, reply = await post(api, org, points, **body)
    assert status == 201, reply
    return dict(reply["billing_point"])


async def balance(api: Api, org: Org) -> dict[str, Any]:
    status, reply = await api.call("GET", f"{org.base}/balance", org.staff)
    assert status == 200, reply
    return dict(reply)


async def listed(api: Api, org: Org, **params: str) -> dict[str, Any]:
    status, reply = await api.call("GET", org.base, org.staff, params=params)
    assert status == 200, reply
    return dict(reply)


# -- staff: the ledger ---------------------------------------------------------------------
async def test_staff_credit_debit_balance_patch_delete(site: Site, api: Api, org: Org) -> None:
    staff_id = site.services.db.read(staff.first)["id"]
    first = await credit(api, org, 1000, description="Prepaid, PO 17", tags=["po-17"])
    assert first["kind"] == "credit" and first["points"] == 1000 and first["org_id"] == org.id
    assert first["created_by"] == staff_id and first["tags"] == ["po-17"]
    assert "meter" not in first and "quantity" not in first and "day" not in first
    taken = await credit(api, org, -250, description="Manual correction")
    assert taken["kind"] == "debit" and taken["points"] == -250
    got = await balance(api, org)
    assert (got["balance"], got["credits"], got["debits"]) == (750, 1000, -250)
    assert got["org_id"] == org.id

    status, one = await api.call("GET", f"{org.base}/{first['id']}", org.staff)
    assert status == 200 and one == {"billing_point": first}
    patch = {"description": "Prepaid, PO 17 (paid)", "tags": ["po-17", "paid"]}
    status, _ = await api.call("PATCH", f"{org.base}/{first['id']}", org.staff, json=patch)
    assert status == 200
    _, one = await api.call("GET", f"{org.base}/{first['id']}", org.staff)
    assert one["billing_point"]["description"] == patch["description"]
    assert one["billing_point"]["tags"] == ["po-17", "paid"]
    assert one["billing_point"]["points"] == 1000  # amounts never change

    assert [e["id"] for e in (await listed(api, org))["billing_points"]] == [
        first["id"],
        taken["id"],
    ]
    status, _ = await api.call("DELETE", f"{org.base}/{taken['id']}", org.staff)
    assert status == 200
    assert (await balance(api, org))["balance"] == 1000
    status, _ = await api.call("GET", f"{org.base}/{taken['id']}", org.staff)
    assert status == 404


async def test_staff_signed_in_to_the_org_may_too(site: Site, api: Api, org: Org) -> None:
    scoped = await staff_token(site, org.id)
    status, reply = await api.call("POST", org.base, scoped, json={"points": 5})
    assert status == 201 and reply["billing_point"]["points"] == 5


async def test_ledger_arithmetic(api: Api, org: Org) -> None:
    for points in (500, 1, -7, 10**12, -(10**12), -3):
        await credit(api, org, points)
    got = await balance(api, org)
    assert got["credits"] == 500 + 1 + 10**12
    assert got["debits"] == -7 - 10**12 - 3
    assert got["balance"] == 491


async def test_each_org_has_its_own_ledger(api: Api, org: Org, other_tenant: Tenant) -> None:
    """Which org an entry belongs to is tested in tests/edge/billing/test_ledger.py; here,
    the 404 Status for an entry asked for under another org."""
    other_base = f"/v2/orgs/{other_tenant.org_id}/billing-points"
    mine = await credit(api, org, 40)
    status, body = await api.call("GET", f"{other_base}/{mine['id']}", org.staff)
    assert status == 404 and body == {"message": "Billing point entry not found"}


async def test_unknown_org_is_404(api: Api, org: Org) -> None:
    for method, path in (
        ("GET", "/v2/orgs/nosuchorg0000000/billing-points"),
        ("GET", "/v2/orgs/nosuchorg0000000/billing-points/balance"),
        ("GET", "/v2/orgs/nosuchorg0000000/billing-points/usage"),
        ("GET", "/v2/orgs/nosuchorg0000000/billing-points/rates"),
    ):
        status, body = await api.call(method, path, org.staff)
        assert (status, body) == (404, {"message": "Organization not found"}), path
    status, _ = await api.call(
        "POST", "/v2/orgs/nosuchorg0000000/billing-points", org.staff, json={"points": 1}
    )
    assert status == 404


# -- every caller but staff is refused (the callers of the world, tests/world.py) -----------
NON_STAFF = {who: 403 for who in CALLERS if who not in ("staff", "staff_unscoped")}
NON_STAFF["anonymous"] = 401


def operations(org: Org, entry_id: str) -> list[tuple[str, str, dict[str, Any]]]:
    one = f"{org.base}/{entry_id}"
    return [
        ("POST", org.base, {"json": {"points": 100}}),
        ("GET", org.base, {}),
        ("GET", f"{org.base}/balance", {}),
        ("GET", f"{org.base}/usage", {}),
        ("GET", f"{org.base}/rates", {}),
        ("PATCH", f"{org.base}/rates", {"json": {"devices": 0}}),
        ("GET", one, {}),
        ("PATCH", one, {"json": {"description": "mine now"}}),
        ("DELETE", one, {}),
    ]


# staff, with or without the scope, are the ledger's tests above
@pytest.mark.parametrize(
    ("who", "expected"), table(NON_STAFF, not_applicable=("staff", "staff_unscoped"))
)
async def test_non_staff_are_refused_everywhere(world: World, who: str, expected: int) -> None:
    assert world.api is not None
    api = world.api
    org = Org(
        world.tenant,
        await world.token("staff_unscoped"),
        f"/v2/orgs/{world.tenant.org_id}/billing-points",
    )
    entry = await credit(api, org, 100, description="kept")
    for method, path, kwargs in operations(org, entry["id"]):
        status, body = await world.call(who, method, path, **kwargs)
        assert status == expected, (who, method, path, body)
        assert set(body) == {"message"}
        if expected == 403:
            assert body["message"] == "Only staff may do this"
    # nothing was written
    assert (await balance(api, org))["balance"] == 100
    _, one = await api.call("GET", f"{org.base}/{entry['id']}", org.staff)
    assert one["billing_point"]["description"] == "kept"
    _, rates = await api.call("GET", f"{org.base}/rates", org.staff)
    assert rates["rates"]["devices"] == 1


async def test_device_key_as_x_api_key_is_refused(site: Site, api: Api, org: Org) -> None:
    key = await add_device(site, org.id, "gateway")
    status, body = await api.call("GET", f"{org.base}/balance", headers={"X-API-Key": key})
    assert (status, body) == (403, {"message": "Only staff may do this"})


# -- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"points": 0}, 400, "points: must not be 0"),
        ({"points": 10**12 + 1}, 400, "points: must be between"),
        ({"points": 5, "description": "x" * 2049}, 400, "description: must be at most"),
        ({"points": 5, "tags": ["t" * 129]}, 400, "tags:"),
        ({"points": 1.5}, 406, "points: must be of type integer"),
        ({"points": "5"}, 406, "points: must be of type integer"),
        ({"points": True}, 406, "points: must be of type integer"),
        ({"description": "no points"}, 406, "points: is required"),
        ({"points": 5, "kind": "usage"}, 406, "kind: is not a known field"),
        ({"points": 5, "tags": "a"}, 406, "tags:"),
    ],
)
async def test_bad_entries(
    api: Api, org: Org, body: dict[str, Any], status: int, message: str
) -> None:
    got, reply = await api.call("POST", org.base, org.staff, json=body)
    assert got == status and set(reply) == {"message"}, reply
    assert reply["message"].startswith(message), reply
    assert (await balance(api, org))["credits"] == 0


async def test_bad_json_and_content_type(api: Api, org: Org) -> None:
    status, reply = await api.call(
        "POST", org.base, org.staff, data="{", headers={"Content-Type": "application/json"}
    )
    assert status == 400 and set(reply) == {"message"}
    status, reply = await api.call("POST", org.base, org.staff, data="points=5")
    assert status == 400 and set(reply) == {"message"}


async def test_bad_patches(api: Api, org: Org) -> None:
    entry = await credit(api, org, 9)
    one = f"{org.base}/{entry['id']}"
    status, reply = await api.call("PATCH", one, org.staff, json={"points": 10})
    assert (status, reply) == (406, {"message": "points: is not a known field"})
    status, reply = await api.call("PATCH", one, org.staff, json={"description": 5})
    assert status == 406 and reply["message"].startswith("description:")
    status, _ = await api.call("PATCH", f"{org.base}/nosuchentry00000", org.staff, json={})
    assert status == 404


@pytest.mark.parametrize(
    "params",
    [
        {"limit": "0"},
        {"limit": "1001"},
        {"limit": "ten"},
        {"colour": "red"},
        {"order_by": "nope"},
        {"points_gte": "many"},
        {"kind_regex": "("},
        {"created_date_gte": "yesterday"},
        {"last_evaluated_key": "{not json"},
        {"last_evaluated_key": json.dumps({"id": "x", "v": 1, "sig": "forged"})},
        {"page": "0"},
        {"tags_contains": ","},
    ],
)
async def test_bad_list_queries(api: Api, org: Org, params: dict[str, str]) -> None:
    status, reply = await api.call("GET", org.base, org.staff, params=params)
    assert status == 400 and set(reply) == {"message"}, (params, reply)


@pytest.mark.parametrize(
    "params",
    [
        {"period": "week"},
        {"from": "2026-13-01"},
        {"colour": "red"},
    ],
)
async def test_bad_usage_queries(api: Api, org: Org, params: dict[str, str]) -> None:
    """Each range rule is tested in tests/edge/billing/test_ledger.py; here, that the query
    reaches it and its refusal is a 400 Status, and that an unknown parameter is one too."""
    status, reply = await api.call("GET", f"{org.base}/usage", org.staff, params=params)
    assert status == 400 and set(reply) == {"message"}, (params, reply)


async def test_repeated_or_unknown_parameters(api: Api, org: Org) -> None:
    status, _ = await api.call("GET", f"{org.base}/usage?period=day&period=month", org.staff)
    assert status == 400
    status, _ = await api.call("GET", f"{org.base}/balance?x=1", org.staff)
    assert status == 400


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"devices": -1}, 400),  # each rate's range: tests/edge/billing/test_rates.py
        ({"devices": 1.5}, 406),
        ({"tunnels": 3}, 406),
        ({"users": "2"}, 406),
    ],
)
async def test_bad_rates(api: Api, org: Org, body: dict[str, Any], status: int) -> None:
    got, reply = await api.call("PATCH", f"{org.base}/rates", org.staff, json=body)
    assert got == status and set(reply) == {"message"}, reply
    _, rates = await api.call("GET", f"{org.base}/rates", org.staff)
    assert rates["rates"] == {
        "devices": 1,
        "users": 1,
        "data_bytes": 10,
        "file_bytes": 10,
        "mqtt_messages": 1,
    }


# -- lists: filters, order, pages, counts --------------------------------------------------
async def test_filters_order_pages_and_counts(api: Api, org: Org) -> None:
    made = [
        await credit(api, org, 100, description="Prepaid", tags=["po"]),
        await credit(api, org, 5, description="Goodwill", tags=["gift"]),
        await credit(api, org, -20, description="Manual fee", tags=["po", "fee"]),
        await credit(api, org, 300, description="Prepaid again", tags=["po"]),
    ]
    ids = [e["id"] for e in made]

    def of(reply: dict[str, Any]) -> list[str]:
        return [e["id"] for e in reply["billing_points"]]

    assert of(await listed(api, org, kind="credit")) == [ids[0], ids[1], ids[3]]
    assert of(await listed(api, org, kind="debit")) == [ids[2]]
    assert of(await listed(api, org, points_gte="100")) == [ids[0], ids[3]]
    assert of(await listed(api, org, **{"points.lt": "0"})) == [ids[2]]
    assert of(await listed(api, org, tags_contains="po")) == [ids[0], ids[2], ids[3]]
    assert of(await listed(api, org, tags_contains_any="gift,fee")) == [ids[1], ids[2]]
    assert of(await listed(api, org, description_sw="prepaid")) == [ids[0], ids[3]]
    assert of(await listed(api, org, description_regex="^Man")) == [ids[2]]
    assert of(await listed(api, org, order_by="points", desc="true")) == [
        ids[3],
        ids[0],
        ids[1],
        ids[2],
    ]
    today = clock.now().date().isoformat()
    assert len(of(await listed(api, org, created_date=today))) == 4
    assert of(await listed(api, org, created_date_gt=today)) == []
    assert of(await listed(api, org, meter="devices")) == []

    first = await listed(api, org, limit="3")
    assert of(first) == ids[:3] and "last_evaluated_key" in first
    key = json.dumps(first["last_evaluated_key"])
    rest = await listed(api, org, limit="3", last_evaluated_key=key)
    assert of(rest) == ids[3:] and "last_evaluated_key" not in rest
    assert await listed(api, org, object_count="") == {"object_count": 4}
    assert await listed(api, org, limit="3", page_count="true", object_count="true") == {
        "object_count": 4,
        "page_count": 2,
    }
    assert of(await listed(api, org, limit="3", page="2")) == ids[3:]


# -- metering: snapshots, counters, the periodic debit -------------------------------------
async def test_periodic_debit_from_metered_usage(site: Site, api: Api, org: Org) -> None:
    tenant, meter = org.tenant, site.services.meter
    await credit(api, org, 1000, description="Prepaid")
    for name in ("d1", "d2", "d3"):
        await add_device(site, org.id, name)
    await tenant.add_user("ann")  # with the org admin: 2 users
    admin = await tenant.admin_token()
    group_id = await site.services.groups.create(
        Principal("user", tenant.admin_id, None, org.id),
        {"name": "Plant", "create_own_access": False},
    )
    status, _ = await api.call(
        "PUT", f"/v2/groups/{group_id}/data/line/1", admin, json={"value": {"t": "x" * 500}}
    )
    assert status == 200
    status, reply = await api.call("PUT", f"/v2/groups/{group_id}/files/a.bin", admin, json={})
    assert status == 200, reply
    sent = await api.client.put(relative(reply["url"]), data=b"y" * 4096)
    assert sent.status == 200
    # a site-wide rate change for this org only: 2 points per device-day
    status, rates = await api.call("PATCH", f"{org.base}/rates", org.staff, json={"devices": 2})
    assert status == 200 and rates["rates"]["devices"] == 2 and rates["rates"]["users"] == 1
    meter.count(org.id, 2500)

    done = await meter.flush()
    assert (done.messages, done.snapshot, done.debits) == (2500, True, 0)
    again = await meter.flush()
    assert (again.messages, again.snapshot, again.debits) == (0, False, 0)  # the day is open
    day = clock.now().date().isoformat()
    assert (await balance(api, org))["balance"] == 1000

    clock.advance(timedelta(days=1))
    org.staff = await staff_token(site)  # the first one has expired meanwhile
    meter.count(org.id, 10)  # counted on the new day
    closed = await meter.flush()
    assert closed.snapshot and closed.debits == 5 and closed.messages == 10
    assert (await meter.flush()).debits == 0  # never debited twice

    usage = (await listed(api, org, kind="usage"))["billing_points"]
    by_meter = {e["meter"]: e for e in usage}
    assert set(by_meter) == {"devices", "users", "data_bytes", "file_bytes", "mqtt_messages"}
    assert {e["day"] for e in usage} == {day}
    assert (by_meter["devices"]["quantity"], by_meter["devices"]["points"]) == (3, -6)
    assert (by_meter["users"]["quantity"], by_meter["users"]["points"]) == (2, -2)
    assert by_meter["file_bytes"]["quantity"] == 4096
    assert by_meter["file_bytes"]["points"] == -1  # 4 KiB of a GiB at 10 a GiB-day: 1
    assert by_meter["data_bytes"]["quantity"] > 500 and by_meter["data_bytes"]["points"] == -1
    assert (by_meter["mqtt_messages"]["quantity"], by_meter["mqtt_messages"]["points"]) == (
        2500,
        -3,
    )
    assert all(e["created_by"] is None for e in usage)
    assert (await balance(api, org))["balance"] == 1000 - 6 - 2 - 1 - 1 - 3

    # a usage debit is not deleted: it is answered by a credit
    status, reply = await api.call("DELETE", f"{org.base}/{by_meter['users']['id']}", org.staff)
    assert status == 409 and set(reply) == {"message"}

    status, summary = await api.call(
        "GET", f"{org.base}/usage", org.staff, params={"period": "day", "from": day}
    )
    assert status == 200, summary
    assert [p["period"] for p in summary["periods"]] == [day, clock.now().date().isoformat()]
    yesterday, today = summary["periods"]
    assert yesterday["meters"]["devices"] == {"quantity": 3, "points": -6}
    assert yesterday["meters"]["mqtt_messages"] == {"quantity": 2500, "points": -3}
    assert yesterday["credits"] == 1000 and yesterday["debits"] == -13
    assert yesterday["net"] == 987
    assert today["meters"]["devices"] == {"quantity": 3, "points": 0}  # not yet debited
    assert today["meters"]["mqtt_messages"]["quantity"] == 10
    assert summary["totals"]["meters"]["devices"] == {"quantity": 6, "points": -6}
    assert summary["units"]["devices"] == "device-day"

    status, by_month = await api.call("GET", f"{org.base}/usage", org.staff, params={"from": day})
    assert status == 200 and by_month["period"] == "month"
    assert sum(p["meters"]["devices"]["quantity"] for p in by_month["periods"]) == 6


async def test_counts_of_a_deleted_org_are_dropped(site: Site, api: Api, org: Org) -> None:
    meter = site.services.meter
    meter.count(org.id, 7)
    status, _ = await api.call("DELETE", f"/v2/orgs/{org.id}?force=true", org.staff)
    assert status == 200
    done = await meter.flush()
    assert done.messages == 7 and meter.pending == 0  # written nowhere, no error
