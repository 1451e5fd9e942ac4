"""MQTT authentication failures are audited once per address, user name and minute
(edge/devices/auth_failures.py); each minute's timer closes that minute alone."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from edge.app import Site
from edge.devices.auth_failures import NOT_AN_ID, AuthFailures
from edge.kernel import clock


async def test_a_minutes_late_timer_does_not_cut_the_next_minute(site: Site) -> None:
    """A failure in the half second between a minute's end and its timer closes that
    minute and opens the next: the timer firing then must leave the new minute alone (it
    cleared the new tallies, so the next failure was written as a new event)."""
    clock.freeze()
    start = clock.now().replace(second=59, microsecond=800_000)
    clock.advance(start - clock.now())  # 0.2 s before a minute ends; its timer: 0.7 s
    failures = AuthFailures(site.services.db)
    failures.failed("192.0.2.1", "guess")
    clock.advance(timedelta(seconds=0.3))  # the next minute, before the timer fires
    failures.failed("192.0.2.1", "guess")
    await asyncio.sleep(1.0)  # the first minute's timer fires
    assert len(failures._tallies) == 1, "the new minute's tally was cut"
    failures.failed("192.0.2.1", "guess")  # counted, not a new event
    assert failures._tallies[("192.0.2.1", NOT_AN_ID)].count == 2
