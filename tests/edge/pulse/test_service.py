"""edge/pulse/service.py: staff read the site's totals or one org's, an org admin their own
org's only (no disk free), everyone else is refused; rates, gaps and the window."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest

from edge.kernel import clock
from edge.kernel.errors import Denied, NotFound, ValidationError
from edge.kernel.principal import Principal
from edge.pulse.counters import Counters
from edge.pulse.sampler import Sampler
from edge.pulse.service import MOST_SAMPLES, Pulse
from storage import pulse as store
from storage.pulse import SITE, Sample
from tests.edge.rooms import Room


async def arranged(room: Room) -> tuple[str, str, Pulse]:
    """Two orgs; a minute where the first's callers made 6 requests and the other's 60."""
    org_id, other = await room.org(), await room.org("Other")
    taking = Sampler(room.services.db, Counters(), lambda: 1000, 24)
    taking.begin()
    for org, count in ((org_id, 6), (other, 60)):
        for _ in range(count):
            taking.counters.request(Principal("user", "u", "s", org))
    clock.advance(timedelta(seconds=60))
    await taking.flush()
    return org_id, other, room.services.pulse


async def test_staff_read_the_sites_totals_with_disk_free(room: Room) -> None:
    org_id, _, pulse = await arranged(room)
    shown = await pulse.series(room.staff())
    assert shown["org_id"] is None
    [sample] = shown["samples"]
    assert (sample["requests"], sample["requests_per_second"]) == (66, 1.1)
    assert sample["disk_free_bytes"] == 1000 and sample["after_gap"] is False


async def test_staff_may_read_one_org_and_are_told_of_an_unknown_one(room: Room) -> None:
    org_id, _, pulse = await arranged(room)
    [sample] = (await pulse.series(room.staff(), org_id=org_id))["samples"]
    assert sample["requests"] == 6 and sample["disk_free_bytes"] == 1000
    with pytest.raises(NotFound):
        await pulse.series(room.staff(), org_id="no-such-org")


async def test_an_org_admin_reads_their_own_org_without_disk_free(room: Room) -> None:
    org_id, other, pulse = await arranged(room)
    admin = await room.admin(org_id)
    shown = await pulse.series(admin)
    assert shown["org_id"] == org_id
    [sample] = shown["samples"]
    assert sample["requests"] == 6 and "disk_free_bytes" not in sample
    assert (await pulse.series(admin, org_id=org_id))["samples"] == shown["samples"]
    for asked in (other, "no-such-org"):  # the same refusal whether it exists or not
        with pytest.raises(Denied):
            await pulse.series(admin, org_id=asked)


async def test_everyone_else_is_refused(room: Room) -> None:
    org_id, _, pulse = await arranged(room)
    plain = room.user(org_id, await room.add_user(org_id))
    device = room.device(org_id, await room.add_device(org_id))
    for who in (plain, device):
        with pytest.raises(Denied):
            await pulse.series(who)


async def test_the_window_is_the_last_hour_unless_asked(room: Room) -> None:
    _, _, pulse = await arranged(room)
    clock.advance(timedelta(minutes=61))
    assert (await pulse.series(room.staff()))["samples"] == []
    since = clock.now() - timedelta(hours=2)
    assert len((await pulse.series(room.staff(), since))["samples"]) == 1
    clock.advance(timedelta(hours=24))  # never before the retention
    assert (await pulse.series(room.staff(), since))["samples"] == []


async def test_a_sample_after_a_restart_is_marked_after_a_gap(room: Room) -> None:
    _, _, pulse = await arranged(room)
    clock.advance(timedelta(minutes=5))  # down
    restarted = Sampler(room.services.db, Counters(), lambda: 1000, 24)
    restarted.begin()
    clock.advance(timedelta(seconds=60))
    await restarted.flush()
    clock.advance(timedelta(seconds=60))
    await restarted.flush()
    samples = (await pulse.series(room.staff()))["samples"]
    assert [s["after_gap"] for s in samples] == [False, True, False]
    assert [s["requests"] for s in samples] == [66, 0, 0]


def seconds_ago(seconds: float) -> int:
    return int((clock.now() - timedelta(seconds=seconds)).timestamp() * 1000)


async def test_an_answer_covers_a_day_at_most_and_pages_with_until(room: Room) -> None:
    """A year's retention is never read in one answer: a wider window is a 400, and a day
    of many short samples (restarts) is cut at MOST_SAMPLES, its `until` where the next
    page starts (#35)."""
    pulse = room.services.pulse
    pulse.retention = timedelta(days=365)
    staff = room.staff()
    with pytest.raises(ValidationError):
        await pulse.series(staff, clock.now() - timedelta(hours=25))
    count = MOST_SAMPLES + 60  # half-minute samples: 1,500 in the last 12.5 hours
    rows = [Sample(SITE, seconds_ago(30 * (n + 1)), seconds_ago(30 * n)) for n in range(count)]
    await room.services.db.write(lambda c: store.add(c, rows))
    since = clock.now() - timedelta(hours=13)
    first = await pulse.series(staff, since)
    assert len(first["samples"]) == MOST_SAMPLES
    assert first["until"] == first["samples"][-1]["end"]
    rest = await pulse.series(staff, clock.parse(first["until"]))
    assert len(rest["samples"]) == count - MOST_SAMPLES
    older = await pulse.series(staff, since, until=clock.now() - timedelta(hours=12))
    assert len(older["samples"]) == count - 12 * 120


async def test_the_samples_are_read_off_the_event_loop(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A day of samples is a long read: it runs on a reader thread, never on the loop
    that serves every tenant (#35)."""
    await arranged(room)
    threads: list[str] = []
    real = store.series

    def spied(*args: Any, **kwargs: Any) -> list[Sample]:
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "series", spied)
    await room.services.pulse.series(room.staff())
    assert threads and threads[0] != threading.main_thread().name
