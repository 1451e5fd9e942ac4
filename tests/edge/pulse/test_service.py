"""edge/pulse/service.py: staff read the site's totals or one org's, an org admin their own
org's only (no disk free), everyone else is refused; rates, gaps and the window."""

from __future__ import annotations

from datetime import timedelta

import pytest

from edge.kernel import clock
from edge.kernel.errors import Denied, NotFound
from edge.kernel.principal import Principal
from edge.pulse.counters import Counters
from edge.pulse.sampler import Sampler
from edge.pulse.service import Pulse
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
    shown = pulse.series(room.staff())
    assert shown["org_id"] is None
    [sample] = shown["samples"]
    assert (sample["requests"], sample["requests_per_second"]) == (66, 1.1)
    assert sample["disk_free_bytes"] == 1000 and sample["after_gap"] is False


async def test_staff_may_read_one_org_and_are_told_of_an_unknown_one(room: Room) -> None:
    org_id, _, pulse = await arranged(room)
    [sample] = pulse.series(room.staff(), org_id=org_id)["samples"]
    assert sample["requests"] == 6 and sample["disk_free_bytes"] == 1000
    with pytest.raises(NotFound):
        pulse.series(room.staff(), org_id="no-such-org")


async def test_an_org_admin_reads_their_own_org_without_disk_free(room: Room) -> None:
    org_id, other, pulse = await arranged(room)
    admin = await room.admin(org_id)
    shown = pulse.series(admin)
    assert shown["org_id"] == org_id
    [sample] = shown["samples"]
    assert sample["requests"] == 6 and "disk_free_bytes" not in sample
    assert pulse.series(admin, org_id=org_id)["samples"] == shown["samples"]
    for asked in (other, "no-such-org"):  # the same refusal whether it exists or not
        with pytest.raises(Denied):
            pulse.series(admin, org_id=asked)


async def test_everyone_else_is_refused(room: Room) -> None:
    org_id, _, pulse = await arranged(room)
    plain = room.user(org_id, await room.add_user(org_id))
    device = room.device(org_id, await room.add_device(org_id))
    for who in (plain, device):
        with pytest.raises(Denied):
            pulse.series(who)


async def test_the_window_is_the_last_hour_unless_asked(room: Room) -> None:
    _, _, pulse = await arranged(room)
    clock.advance(timedelta(minutes=61))
    assert pulse.series(room.staff())["samples"] == []
    since = clock.now() - timedelta(hours=2)
    assert len(pulse.series(room.staff(), since)["samples"]) == 1
    clock.advance(timedelta(hours=24))  # never before the retention
    assert pulse.series(room.staff(), since)["samples"] == []


async def test_a_sample_after_a_restart_is_marked_after_a_gap(room: Room) -> None:
    _, _, pulse = await arranged(room)
    clock.advance(timedelta(minutes=5))  # down
    restarted = Sampler(room.services.db, Counters(), lambda: 1000, 24)
    restarted.begin()
    clock.advance(timedelta(seconds=60))
    await restarted.flush()
    clock.advance(timedelta(seconds=60))
    await restarted.flush()
    samples = pulse.series(room.staff())["samples"]
    assert [s["after_gap"] for s in samples] == [False, True, False]
    assert [s["requests"] for s in samples] == [66, 0, 0]
