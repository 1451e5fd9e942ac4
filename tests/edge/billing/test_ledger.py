"""edge/billing/ledger.py: staff alone keep an org's ledger; entries are credits or debits
by their sign, never 0 and never edited; usage debits are not deleted; the balance, the
usage summary's periods, and rates merged over what the org had."""

from __future__ import annotations

from datetime import timedelta

import pytest

from edge.billing.ledger import MAX_POINTS
from edge.billing.meter import Meter
from edge.kernel import clock
from edge.kernel.errors import Conflict, Denied, NotFound, ValidationError
from edge.kernel.listing import ListQuery
from tests.edge.rooms import Room


async def test_only_staff_keep_the_ledger(room: Room) -> None:
    org_id = await room.org()
    admin = await room.admin(org_id)
    billing, staff = room.services.billing, room.staff()
    entry = await billing.create(staff, org_id, {"points": 100, "description": "kept"})
    refused = [
        billing.create(admin, org_id, {"points": 10}),
        billing.list(admin, org_id, ListQuery()),
        billing.patch(admin, org_id, entry, {"description": "mine now"}),
        billing.delete(admin, org_id, entry),
        billing.patch_rates(admin, org_id, {"devices": 0}),
    ]
    for call in refused:
        with pytest.raises(Denied):
            await call
    for read in (
        lambda: billing.balance(admin, org_id),
        lambda: billing.summary(admin, org_id, "day", None, None),
        lambda: billing.rates(admin, org_id),
        lambda: billing.get(admin, org_id, entry),
    ):
        with pytest.raises(Denied):
            read()
    assert billing.get(staff, org_id, entry)["description"] == "kept"  # nothing was written
    assert billing.balance(room.staff(org_id), org_id)["balance"] == 100  # scoped staff too
    assert billing.rates(staff, org_id)["rates"]["devices"] == 1
    with pytest.raises(NotFound):
        billing.balance(staff, "no-such-org")
    with pytest.raises(NotFound):
        await billing.create(staff, "no-such-org", {"points": 1})


async def test_an_entrys_sign_makes_it_a_credit_or_a_debit(room: Room) -> None:
    org_id = await room.org()
    billing, staff = room.services.billing, room.staff()
    credit = await billing.create(staff, org_id, {"points": 100, "tags": ["promo"]})
    debit = await billing.create(staff, org_id, {"points": -30, "description": "refund"})
    shown = billing.get(staff, org_id, credit)
    assert (shown["kind"], shown["points"], shown["tags"]) == ("credit", 100, ["promo"])
    assert "meter" not in shown and "day" not in shown  # usage debits only
    assert billing.get(staff, org_id, debit)["kind"] == "debit"
    balance = billing.balance(staff, org_id)
    assert (balance["balance"], balance["credits"], balance["debits"]) == (70, 100, -30)
    for points in (0, MAX_POINTS + 1, "5", None):
        with pytest.raises(ValidationError) as refused:
            await billing.create(staff, org_id, {"points": points})
        assert refused.value.field == "points"


async def test_entries_belong_to_their_org(room: Room) -> None:
    org_id, other = await room.org(), await room.org("Other")
    billing, staff = room.services.billing, room.staff()
    entry = await billing.create(staff, org_id, {"points": 5})
    with pytest.raises(NotFound):
        billing.get(staff, other, entry)
    with pytest.raises(NotFound):
        await billing.delete(staff, other, entry)
    assert (await billing.list(staff, other, ListQuery())).rows == []
    await billing.create(staff, other, {"points": 2})
    assert billing.get(staff, org_id, entry)["points"] == 5  # the refused delete kept it
    assert billing.balance(staff, org_id)["balance"] == 5


async def test_a_patch_changes_the_words_never_the_points(room: Room) -> None:
    org_id = await room.org()
    billing, staff = room.services.billing, room.staff()
    entry = await billing.create(staff, org_id, {"points": 5, "description": "old"})
    await billing.patch(staff, org_id, entry, {"description": "new", "points": 500})
    shown = billing.get(staff, org_id, entry)
    assert (shown["description"], shown["points"]) == ("new", 5)


async def test_staff_entries_are_deleted_usage_debits_are_answered(room: Room) -> None:
    org_id = await room.org()
    billing, staff = room.services.billing, room.staff()
    entry = await billing.create(staff, org_id, {"points": 5})
    await billing.delete(staff, org_id, entry)
    with pytest.raises(NotFound):
        billing.get(staff, org_id, entry)
    meter = Meter(room.services.db)
    meter.count(org_id, 1500)
    await meter.flush()
    clock.advance(timedelta(days=1))
    await meter.flush()
    usage = [
        e for e in (await billing.list(staff, org_id, ListQuery())).rows if e["kind"] == "usage"
    ]
    assert [(e["meter"], e["points"]) for e in usage] == [("mqtt_messages", -2)]
    with pytest.raises(Conflict):
        await billing.delete(staff, org_id, usage[0]["id"])


async def test_rates_are_merged_over_what_the_org_had(room: Room) -> None:
    org_id = await room.org()
    billing, staff = room.services.billing, room.staff()
    await billing.patch_rates(staff, org_id, {"devices": 3})
    await billing.patch_rates(staff, org_id, {"users": 4})
    shown = billing.rates(staff, org_id)["rates"]
    assert (shown["devices"], shown["users"], shown["data_bytes"]) == (3, 4, 10)
    with pytest.raises(ValidationError):
        await billing.patch_rates(staff, org_id, {"devices": -1})
    assert billing.rates(staff, org_id)["rates"]["devices"] == 3


@pytest.mark.parametrize(
    ("period", "first", "last", "keys"),
    [
        (
            "day",
            "2026-01-30",
            "2026-02-02",
            ["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02"],
        ),
        ("month", "2026-01-30", "2026-03-01", ["2026-01", "2026-02", "2026-03"]),
        ("month", None, "2026-02-17", ["2026-02"]),
    ],
)
async def test_a_summary_has_a_bucket_per_period(
    room: Room, period: str, first: str | None, last: str, keys: list[str]
) -> None:
    org_id = await room.org()
    shown = room.services.billing.summary(room.staff(), org_id, period, first, last)
    assert [p["period"] for p in shown["periods"]] == keys
    assert shown["to"] == last and "period" not in shown["totals"]


async def test_a_summary_by_day_holds_the_last_30_days_or_at_most_366(room: Room) -> None:
    org_id = await room.org()
    shown = room.services.billing.summary(room.staff(), org_id, "day", None, None)
    assert len(shown["periods"]) == 30
    assert shown["to"] == clock.now().date().isoformat()
    widest = room.services.billing.summary(room.staff(), org_id, "day", "2025-01-01", "2026-01-01")
    assert len(widest["periods"]) == 366  # the longest range by day


@pytest.mark.parametrize(
    ("period", "first", "last", "field"),
    [
        ("week", None, None, "period"),
        ("day", "2026-02-02", "2026-02-01", "from"),
        ("day", "2024-12-31", "2026-01-01", "to"),  # 366 days after
        ("month", "yesterday", None, "from"),
        ("day", None, "2026-13-01", "to"),
        ("day", None, "soon", "to"),
        ("month", "2000-01-01", "2026-11-01", "to"),  # past 3660 days
    ],
)
async def test_a_summary_refuses_a_bad_range(
    room: Room, period: str, first: str | None, last: str | None, field: str
) -> None:
    org_id = await room.org()
    with pytest.raises(ValidationError) as refused:
        room.services.billing.summary(room.staff(), org_id, period, first, last)
    assert refused.value.field == field


async def test_a_summary_adds_usage_and_points_into_their_periods(room: Room) -> None:
    org_id = await room.org()
    billing, staff = room.services.billing, room.staff()
    meter = Meter(room.services.db)
    meter.count(org_id, 2500)
    await meter.flush()
    first_day = clock.now().date().isoformat()
    clock.advance(timedelta(days=1))
    await meter.flush()  # debits the first day
    await billing.create(staff, org_id, {"points": 50})
    today = clock.now().date().isoformat()
    shown = billing.summary(staff, org_id, "day", first_day, today)
    day_one, day_two = shown["periods"]
    assert day_one["meters"]["mqtt_messages"]["quantity"] == 2500
    assert day_two["credits"] == 50
    totals = shown["totals"]
    assert totals["meters"]["mqtt_messages"] == {"quantity": 2500, "points": -3}
    assert (totals["credits"], totals["debits"], totals["net"]) == (50, -3, 47)
