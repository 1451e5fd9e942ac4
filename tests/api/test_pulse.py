"""GET /v2/pulse (an extension, api/pulse.py): who may read which series, its shape, and
that the counts follow what the site does over real HTTP and MQTT: an org's callers'
requests, sign-in failures and devices' messages and presence in its own series and the
site's totals, never in another org's."""

from __future__ import annotations

from typing import Any

import pytest

from edge.kernel import clock
from edge.kernel.principal import Principal
from tests.embedded_broker.conftest import Harness, broker
from tests.world import CALLERS, World, table

__all__ = ["broker"]
READERS = {"staff": 200, "staff_unscoped": 200, "org_admin": 200, "other_admin": 200}
READERS["device_boss"] = 200  # an org admin, as a device
READERS["anonymous"] = 401
NAMES = ("requests", "mqtt_messages", "sign_in_failures")


def everyone(expected: dict[str, int]) -> dict[str, int]:
    return {who: expected.get(who, 403) for who in CALLERS}


async def totals(world: World, who: Principal, org_id: str | None = None) -> dict[str, int]:
    """Each count summed over the last hour, read through the service (an HTTP read would
    count itself)."""
    samples = (await world.site.services.pulse.series(who, org_id=org_id))["samples"]
    return {name: sum(s[name] for s in samples) for name in NAMES}


def staff() -> Principal:
    return Principal("staff", "staff", None, None)


@pytest.mark.parametrize(("who", "status"), table(everyone(READERS)))
async def test_who_may_read_the_pulse(world: World, who: str, status: int) -> None:
    got, body = await world.call(who, "GET", "/v2/pulse")
    assert got == status, body
    if status == 200:
        pulse = body["pulse"]
        assert isinstance(pulse["samples"], list) and pulse["interval_seconds"] == 60
    else:
        assert set(body) == {"message"}


async def test_staff_see_the_site_and_org_admins_their_org_without_disk_free(
    world: World,
) -> None:
    await world.site.services.pulse_sampler.flush()  # at least one sample
    for who, org_id, with_disk in (
        ("staff_unscoped", None, True),
        ("org_admin", world.tenant.org_id, False),
        ("other_admin", world.other.org_id, False),
    ):
        status, body = await world.call(who, "GET", "/v2/pulse")
        assert status == 200, body
        pulse = body["pulse"]
        assert pulse["org_id"] == org_id and pulse["samples"], who
        last = pulse["samples"][-1]
        assert ("disk_free_bytes" in last) is with_disk, who
        assert set(last) >= {"start", "end", "after_gap", *NAMES, "devices_online"}
    status, body = await world.call("staff", "GET", f"/v2/pulse?org_id={world.tenant.org_id}")
    assert status == 200 and body["pulse"]["org_id"] == world.tenant.org_id
    assert body["pulse"]["samples"][-1]["disk_free_bytes"] > 0  # staff see it for an org too


@pytest.mark.parametrize(
    ("who", "query", "status"),
    [
        ("org_admin", "org_id={other}", 403),  # another org's: refused, not shown
        ("org_admin", "org_id=no-such-org", 403),  # the same answer whether it exists
        ("other_admin", "org_id={clinic}", 403),
        ("staff_unscoped", "org_id=no-such-org", 404),
        ("staff_unscoped", "since=yesterday", 400),
        ("staff_unscoped", "since=2026-01-01T00:00:00Z&since=2026-01-02T00:00:00Z", 400),
        ("staff_unscoped", "until=tomorrow", 400),
        ("staff_unscoped", "when=2026-01-01T00:00:00Z", 400),
        ("plain", "org_id={clinic}", 403),
    ],
)
async def test_what_is_refused(world: World, who: str, query: str, status: int) -> None:
    asked = query.format(other=world.other.org_id, clinic=world.tenant.org_id)
    got, body = await world.call(who, "GET", f"/v2/pulse?{asked}")
    assert got == status, body
    assert set(body) == {"message"}


async def test_requests_count_for_the_callers_org_and_never_another(world: World) -> None:
    clinic, other = world.tenant.org_id, world.other.org_id
    sampler = world.site.services.pulse_sampler
    await sampler.flush()
    before = {o: await totals(world, staff(), o) for o in (None, clinic, other)}
    for _ in range(5):
        assert (await world.call("org_admin", "GET", "/v2/projects"))[0] == 200
    for _ in range(2):
        assert (await world.call("plain", "GET", f"/v2/groups/{world.org_group_id}"))[0] == 404
    for _ in range(3):
        assert (await world.call("other_admin", "GET", "/v2/projects"))[0] == 200
    assert (await world.call("anonymous", "GET", "/v2/projects"))[0] == 401
    await sampler.flush()
    after = {o: await totals(world, staff(), o) for o in (None, clinic, other)}
    added = {o: after[o]["requests"] - before[o]["requests"] for o in after}
    assert added == {None: 11, clinic: 7, other: 3}
    status, body = await world.call("org_admin", "GET", "/v2/pulse")
    assert status == 200
    mine = sum(s["requests"] for s in body["pulse"]["samples"])
    assert mine == after[clinic]["requests"]  # the org's own count, not the site's


@pytest.mark.parametrize("who", ["org_admin", "device_boss"])
async def test_a_request_a_staff_route_refuses_counts_for_the_callers_org(
    world: World, who: str
) -> None:
    """The staff check refused before the caller was known to the request, so a refused
    request counted in the site's total alone, not in the caller's org's (#35)."""
    clinic = world.tenant.org_id
    sampler = world.site.services.pulse_sampler
    await sampler.flush()
    before = {o: await totals(world, staff(), o) for o in (None, clinic)}
    where = f"/v2/orgs/{clinic}/billing-points/balance"  # a staff route
    for _ in range(3):
        assert (await world.call(who, "GET", where))[0] == 403
    await sampler.flush()
    after = {o: await totals(world, staff(), o) for o in (None, clinic)}
    added = {o: after[o]["requests"] - before[o]["requests"] for o in after}
    assert added == {None: 3, clinic: 3}


async def test_sign_in_failures_count_for_the_org_signed_in_to(world: World) -> None:
    assert world.api is not None
    clinic, other = world.tenant.org_id, world.other.org_id
    sampler = world.site.services.pulse_sampler
    await sampler.flush()
    before = {o: await totals(world, staff(), o) for o in (None, clinic, other)}
    wrong: dict[str, Any] = {"grant_type": "password", "password": "not-the-password"}
    form = {**wrong, "username": world.email("plain"), "client_id": world.tenant.alias}
    assert (await world.api.call("POST", "/v2/auth/token", data=form))[0] == 400
    staff_form = {**wrong, "username": "admin"}
    assert (await world.api.call("POST", "/v2/auth/token", data=staff_form))[0] == 400
    await sampler.flush()
    after = {o: await totals(world, staff(), o) for o in (None, clinic, other)}
    added = {o: after[o]["sign_in_failures"] - before[o]["sign_in_failures"] for o in after}
    assert added == {None: 2, clinic: 1, other: 0}


async def test_devices_messages_and_presence_count_for_their_org(broker: Harness) -> None:
    services = broker.site.services
    sampler, pulse = services.pulse_sampler, services.pulse
    device = await broker.device("dev1")
    client = await broker.connected(device, "c")
    for _ in range(3):
        await client.publish(f"{device.root}/sensors/temp", b"21.5", 1)
    await broker.until(lambda: services.devices.presence.is_online(device.id))
    await sampler.flush()
    mine = (await pulse.series(staff(), org_id=broker.org_id))["samples"]
    theirs = (await pulse.series(staff(), org_id=broker.other_org_id))["samples"]
    assert sum(s["mqtt_messages"] for s in mine) == 3
    assert mine[-1]["devices_online"] == 1
    assert sum(s["mqtt_messages"] for s in theirs) == 0 and theirs[-1]["devices_online"] == 0
    site = (await pulse.series(staff()))["samples"]
    assert site[-1]["devices_online"] == 1 and sum(s["mqtt_messages"] for s in site) == 3
    await services.meter.flush()  # billing still gets every message: the source is shared
    today = clock.now().date().isoformat()
    usage = services.billing.summary(staff(), broker.org_id, "day", today, today)
    assert usage["periods"][0]["meters"]["mqtt_messages"]["quantity"] == 3
