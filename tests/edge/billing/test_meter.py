"""edge/billing/meter.py: counts kept in memory until a flush adds them to the day; one
snapshot of the gauges a day; closed days debited once, at the org's rates; the counts
written once more on shutdown."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from edge.billing.meter import Meter
from edge.kernel import clock
from edge.kernel.listing import ListQuery
from storage import billing as billing_store
from tests.edge.rooms import Room


def _usage(room: Room, org_id: str, day: str) -> dict[str, int]:
    shown = room.services.billing.summary(room.staff(), org_id, "day", day, day)
    return {m: v["quantity"] for m, v in shown["periods"][0]["meters"].items()}


async def _usage_debits(room: Room, org_id: str) -> list[tuple[str, int, int]]:
    page = await room.services.billing.list(room.staff(), org_id, ListQuery(limit=1000))
    return sorted(
        (e["meter"], e["quantity"], e["points"]) for e in page.rows if e["kind"] == "usage"
    )


async def test_counts_wait_in_memory_until_a_flush(room: Room) -> None:
    org_id, other = await room.org(), await room.org("Other")
    meter = Meter(room.services.db)
    meter.count(org_id, 3)
    meter.count(org_id, 4)
    meter.source = lambda: {other: 10}
    today = clock.now().date().isoformat()
    assert meter.pending == 7 and _usage(room, org_id, today)["mqtt_messages"] == 0
    done = await meter.flush()
    assert (done.messages, meter.pending) == (17, 0)
    assert _usage(room, org_id, today)["mqtt_messages"] == 7
    assert _usage(room, other, today)["mqtt_messages"] == 10
    meter.source = None
    meter.count(org_id, 1)
    await meter.flush()
    assert _usage(room, org_id, today)["mqtt_messages"] == 8  # added to the day


async def test_the_gauges_are_snapshotted_once_a_day(room: Room) -> None:
    org_id = await room.org()
    for _ in range(2):
        await room.add_user(org_id)
    await room.add_device(org_id)
    meter = Meter(room.services.db)
    today = clock.now().date().isoformat()
    assert (await meter.flush()).snapshot is True
    await room.add_device(org_id)
    assert (await meter.flush()).snapshot is False  # the day has its snapshot
    used = _usage(room, org_id, today)
    assert (used["users"], used["devices"]) == (2, 1)
    clock.advance(timedelta(days=1))
    assert (await meter.flush()).snapshot is True
    assert _usage(room, org_id, clock.now().date().isoformat())["devices"] == 2


async def test_closed_days_are_debited_once_at_the_orgs_rates(room: Room) -> None:
    org_id, cheap = await room.org(), await room.org("Cheap")
    await room.services.billing.patch_rates(room.staff(), cheap, {"devices": 0, "users": 0})
    for org in (org_id, cheap):
        await room.add_device(org)
        await room.add_user(org)
    meter = Meter(room.services.db)
    meter.count(org_id, 999)
    assert (await meter.flush()).debits == 0  # today is not closed
    clock.advance(timedelta(days=1))
    done = await meter.flush()
    assert done.debits == 3
    assert await _usage_debits(room, org_id) == [
        ("devices", 1, -1),
        ("mqtt_messages", 999, -1),
        ("users", 1, -1),
    ]
    assert await _usage_debits(room, cheap) == []  # nothing to pay: no entry
    assert (await meter.flush()).debits == 0  # each day once
    balance = room.services.billing.balance(room.staff(), org_id)["balance"]
    assert balance == -3


async def test_run_writes_the_counts_once_more_when_stopped(room: Room) -> None:
    org_id = await room.org()
    meter = Meter(room.services.db, interval=3600)
    stop = asyncio.Event()
    running = asyncio.create_task(meter.run(stop))
    await asyncio.sleep(0)
    meter.count(org_id, 5)
    stop.set()
    await running
    assert meter.pending == 0
    today = clock.now().date().isoformat()
    assert _usage(room, org_id, today)["mqtt_messages"] == 5
    assert not room.services.db.read(
        lambda c: billing_store.snapshot_taken(c, today)
    )  # counts only
