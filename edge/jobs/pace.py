"""How fast one maker may make jobs (docs/jobs.md, "Running jobs"): at most `per_hour`
jobs in any hour, counted per caller in this process.

A job is up to 32 KiB of document and an execution per target, and an ended job is kept
for jobs_retention_days: without a pace, one caller making and canceling jobs in a loop
grows the database for everyone. The count is of jobs made, deleted ones included (so a
make-and-delete loop is held too), and a place is taken when a creation starts and given
back only if it is refused (a 400, 403, 404, 409), so concurrent requests of one caller
cannot pass the limit together; a request cut off midway keeps its place, as its job may
have been written.
Refused with 429 and a Retry-After of the seconds until the oldest of the hour's
creations leaves the window. Kept in memory: a restart forgets it, which is one hour's
worth at most.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from edge.kernel import clock
from edge.kernel.errors import EdgeError, TooManyAttempts

WINDOW = timedelta(hours=1)


class Pace:
    def __init__(self, per_hour: int) -> None:
        self.per_hour = per_hour
        self._made: dict[str, deque[datetime]] = {}

    @contextmanager
    def turn(self, who: str) -> Iterator[None]:
        """A place in `who`'s hour for one creation, given back if it is refused (none
        left: a 429)."""
        stamp = self._take(who)
        try:
            yield
        except EdgeError:
            self._give_back(who, stamp)
            raise

    def _take(self, who: str) -> datetime:
        now = clock.now()
        made = self._recent(who, now)
        if len(made) >= self.per_hour:
            wait = math.ceil((made[0] + WINDOW - now).total_seconds())
            raise TooManyAttempts(
                f"Too many jobs: at most {self.per_hour} made per hour (jobs_create_per_hour)",
                retry_after=max(1, wait),
            )
        made.append(now)
        return now

    def _recent(self, who: str, now: datetime) -> deque[datetime]:
        """`who`'s creations of the last hour; callers idle for an hour are forgotten."""
        for name in [n for n, times in self._made.items() if times[-1] <= now - WINDOW]:
            del self._made[name]
        made = self._made.setdefault(who, deque())
        while made and made[0] <= now - WINDOW:
            made.popleft()
        return made

    def _give_back(self, who: str, stamp: datetime) -> None:
        made = self._made.get(who)
        if made is not None and stamp in made:
            made.remove(stamp)
            if not made:
                del self._made[who]
