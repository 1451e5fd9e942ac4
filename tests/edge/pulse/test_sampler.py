"""edge/pulse/sampler.py: a flush writes the site's sample and each organization's in one
transaction, prunes what is past the retention, and a restart leaves a gap (no sample)
between the runs, not zeros; the samples outlive the process's database handle."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest

from edge.kernel import clock
from edge.kernel.principal import Principal
from edge.pulse.counters import Counters
from edge.pulse.sampler import Sampler
from storage import pulse as store
from storage.database import Database
from tests.edge.rooms import Room
from tests.factory import new_site

DISK = 123_456_789


@dataclass(frozen=True)
class Went:
    org_id: str
    online: bool


def sampler(db: Database, retention_hours: int = 24) -> Sampler:
    made = Sampler(db, Counters(), lambda: DISK, retention_hours)
    made.begin()
    return made


def rows(db: Database) -> list[store.Sample]:
    return db.read(lambda c: [*store.series(c, store.SITE, 0)])


def user(org_id: str) -> Principal:
    return Principal("user", "u-" + org_id, "s", org_id)


async def test_a_flush_writes_the_site_and_each_org_that_counted(room: Room) -> None:
    db = room.services.db
    taking = sampler(db)
    counters = taking.counters
    for _ in range(3):
        counters.request(user("a"))
    counters.request(user("b"))
    counters.request(None)
    counters.sign_in_failed("b")
    counters.presence(Went("c", True))
    counters.mqtt = lambda: {"a": 120}
    clock.advance(timedelta(seconds=60))
    samples = {s.org_id: s for s in await taking.flush()}
    assert set(samples) == {store.SITE, "a", "b", "c"}
    site = samples[store.SITE]
    assert (site.requests, site.mqtt_messages, site.sign_in_failures) == (5, 120, 1)
    assert (site.devices_online, site.disk_free) == (1, DISK)
    assert site.ended - site.started == 60_000
    a, b, c = samples["a"], samples["b"], samples["c"]
    assert (a.requests, a.mqtt_messages, a.disk_free) == (3, 120, None)
    assert (b.requests, b.sign_in_failures) == (1, 1)
    assert (c.requests, c.devices_online) == (0, 1)
    stored = db.read(lambda conn: store.series(conn, "a", 0))
    assert [(s.requests, s.mqtt_messages, s.disk_free) for s in stored] == [(3, 120, DISK)]


async def test_an_orgs_idle_minute_reads_as_zeros_on_the_sites_timeline(room: Room) -> None:
    db = room.services.db
    taking = sampler(db)
    taking.counters.request(user("a"))
    clock.advance(timedelta(seconds=60))
    await taking.flush()
    clock.advance(timedelta(seconds=60))
    await taking.flush()  # "a" counted nothing: no row of its own
    stored = db.read(lambda c: store.series(c, "a", 0))
    assert [s.requests for s in stored] == [1, 0]
    assert stored[1].started == stored[0].ended  # one span after the other


async def test_samples_past_the_retention_are_pruned_by_a_flush(room: Room) -> None:
    db = room.services.db
    taking = sampler(db, retention_hours=1)
    for minutes in (30, 30, 31):
        clock.advance(timedelta(minutes=minutes))
        taking.counters.request(user("a"))
        await taking.flush()
    ended = [s.ended for s in rows(db)]
    assert len(ended) == 2  # the first ended 61 minutes before the last flush: gone
    assert max(ended) - min(ended) == 31 * 60_000
    left = db.read(lambda c: store.series(c, "a", 0))
    assert len(left) == 2  # the org's rows went with it


async def test_counts_of_a_failed_write_are_written_by_the_next_flush(room: Room) -> None:
    db = room.services.db
    taking = sampler(db)
    taking.counters.request(None)
    clock.advance(timedelta(seconds=60))
    db.close()
    with pytest.raises(Exception):  # noqa: B017 - the closed database's own refusal
        await taking.flush()
    reopened = new_site(room.services.config.data_dir)
    try:
        again = Sampler(reopened.services.db, taking.counters, lambda: DISK, 24)  # same counts
        clock.advance(timedelta(seconds=60))
        written = await again.flush()
        assert written[0].requests == 1
    finally:
        reopened.services.db.close()


async def test_a_restart_leaves_a_gap_and_keeps_the_samples(room: Room) -> None:
    folder = room.services.config.data_dir
    first = sampler(room.services.db)
    first.counters.request(None)
    clock.advance(timedelta(seconds=60))
    await first.flush()
    clock.advance(timedelta(seconds=20))
    await first.flush()  # the last, as the run stops
    room.services.db.close()
    clock.advance(timedelta(minutes=10))  # the server is down
    restarted = new_site(folder)
    try:
        second = sampler(restarted.services.db)
        clock.advance(timedelta(seconds=60))
        await second.flush()
        stored = rows(restarted.services.db)
    finally:
        restarted.services.db.close()
    assert [s.requests for s in stored] == [1, 0, 0]  # the first run's survive
    assert stored[2].started - stored[1].ended == 10 * 60_000  # nothing in the gap
