"""The flush: every `interval` seconds the counters become one sample of the site and one
of each organization that counted something or has a device online, written with the
prune of samples past the retention in one transaction. A run's first sample starts when
the run starts, and its last is written as it stops, so the minutes the server was down
have no sample at all: the series shows a gap there, not zeros."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from edge.kernel import clock
from edge.pulse.counters import Counters, Counts
from storage import pulse as store
from storage.database import Database
from storage.pulse import Sample
from storage.rows import Tx

INTERVAL_SECONDS = 60.0
log = logging.getLogger("edge.pulse")
DiskFree = Callable[[], int | None]


def now_ms() -> int:
    return int(clock.now().timestamp() * 1000)


class Sampler:
    def __init__(
        self,
        db: Database,
        counters: Counters,
        disk_free: DiskFree,
        retention_hours: int,
        interval: float = INTERVAL_SECONDS,
    ) -> None:
        self._db = db
        self.counters = counters
        self._disk_free = disk_free
        self._keep_ms = retention_hours * 3600 * 1000
        self._interval = interval
        self._started = now_ms()

    def begin(self) -> None:
        """This run's first sample starts now (not when the services were built)."""
        self._started = now_ms()
        self.counters.take()  # nothing counted before the run belongs to its first minute

    async def flush(self) -> list[Sample]:
        """Write the counts since the last flush, and prune; the samples written. Counts
        that could not be written are put back for the next flush (whose span then covers
        both)."""
        ended = max(now_ms(), self._started + 1)
        counts = self.counters.take()
        samples = _samples(counts, self.counters.online, self._started, ended, self._disk())
        try:
            await self._db.write(lambda c: _record(c, samples, ended - self._keep_ms))
        except BaseException:
            self.counters.give_back(counts)
            raise
        self._started = ended
        return samples

    def _disk(self) -> int | None:
        try:
            return self._disk_free()
        except OSError:  # the data folder's disk cannot be read: no figure this minute
            log.warning("pulse: the data folder's free space could not be read")
            return None

    async def run(self, stop: asyncio.Event) -> None:
        """Flush every interval until asked to stop, and once more then."""
        self.begin()
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self._interval)
            try:
                await self.flush()
            except Exception:  # the counts stay for the next flush
                log.exception("pulse: could not record a sample")


def _record(conn: Tx, samples: list[Sample], before: int) -> None:
    store.add(conn, samples)
    store.prune(conn, before)


def _samples(
    counts: Counts, online: dict[str, int], started: int, ended: int, disk_free: int | None
) -> list[Sample]:
    """The site's sample first, then one per organization with anything to show."""
    site = Sample(
        store.SITE,
        started,
        ended,
        counts.requests_total,
        sum(counts.mqtt_messages.values()),
        counts.sign_in_failures_total,
        sum(online.values()),
        disk_free,
    )
    orgs = set(counts.requests) | set(counts.mqtt_messages) | set(counts.sign_in_failures)
    orgs.update(online)
    return [site] + [
        Sample(
            org_id,
            started,
            ended,
            counts.requests.get(org_id, 0),
            counts.mqtt_messages.get(org_id, 0),
            counts.sign_in_failures.get(org_id, 0),
            online.get(org_id, 0),
        )
        for org_id in sorted(orgs)
    ]
