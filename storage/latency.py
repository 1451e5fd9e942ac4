"""A latency histogram in plain Python: fed on any one thread, read at scrape time.

`GET /metrics` (edge/ops/metrics.py) turns it into a Prometheus histogram. Feeding it costs
a bisect and two additions, so the paths it measures (a commit, a request) pay nothing
more; only one thread feeds each instance, and a scrape that reads it mid-update sees at
worst one observation in the count but not yet in the sum.
"""

from __future__ import annotations

from bisect import bisect_left

# Upper bounds in seconds, from a point query's answer to a stalled disk.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Latency:
    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)  # the last one: above every bound (+Inf)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(BUCKETS, seconds)] += 1
        self.total += seconds

    def cumulative(self) -> list[tuple[str, int]]:
        """(upper bound, observations at or below it), ending with "+Inf": the count."""
        out, running = [], 0
        for bound, count in zip((*map(str, BUCKETS), "+Inf"), self.counts, strict=True):
            running += count
            out.append((bound, running))
        return out
