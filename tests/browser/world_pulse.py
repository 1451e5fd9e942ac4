"""An hour of the site's pulse, for the Pulse page's browser tests and screenshots: one
sample a minute of the site and of Clinic (and a little of Other), written straight to
storage as the flush writes them, with the server down for five minutes in the middle (a
gap the charts and the table show as one)."""

from __future__ import annotations

import math

from edge.app import Site
from edge.kernel import clock
from storage import pulse as store
from tests.world import World

MINUTE_MS = 60_000
MINUTES = 60
DOWN = range(30, 35)  # minutes ago the server was not running
GIB = 1024**3


def minute_values(i: int) -> tuple[int, int, int, int]:
    """Clinic's requests, MQTT messages, sign-in failures and devices online in minute i
    (0: the oldest): a daily-looking swell, a burst of failures, devices coming online."""
    requests = 600 + int(300 * math.sin(i / 9))
    messages = 1200 + 40 * i
    failures = 4 if i in (12, 13) else 0
    online = min(3 + i // 6, 12)
    return requests, messages, failures, online


def samples(org_id: str, other_id: str, now_ms: int) -> list[store.Sample]:
    """The hour's samples of the site, Clinic and Other, the server down during DOWN."""
    made: list[store.Sample] = []
    for i in range(MINUTES):
        ago = MINUTES - i
        if ago in DOWN:
            continue
        ended = now_ms - ago * MINUTE_MS + MINUTE_MS // 2  # the oldest 59.5 minutes ago
        requests, messages, failures, online = minute_values(i)
        started = ended - MINUTE_MS
        if ago + 1 in DOWN:  # the first after the restart: half a minute, half the counts
            started, requests, messages = ended - MINUTE_MS // 2, requests // 2, messages // 2
        disk = 40 * GIB - i * 64 * 1024**2
        made += [
            store.Sample(
                store.SITE,
                started,
                ended,
                requests + 90,
                messages + 300,
                failures + 1,
                online + 2,
                disk,
            ),
            store.Sample(org_id, started, ended, requests, messages, failures, online),
            store.Sample(other_id, started, ended, 90, 300, 1, 2),
        ]
    return made


def seed(site: Site, world: World) -> None:
    """The hour, written in one transaction."""
    now_ms = int(clock.now().timestamp() * 1000)
    rows = samples(world.tenant.org_id, world.other.org_id, now_ms)
    site.services.db.write_sync(lambda c: store.add(c, rows))
