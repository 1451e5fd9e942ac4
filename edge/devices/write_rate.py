"""How fast one device may write over HTTP (docs/conventions.md, "A device's write rate"): a token
bucket per device holding `device_write_burst` writes, refilled at `device_write_rate`
a second, whatever credential the device calls with (its API key, an access token, its
client certificate). A write past it is refused before the handler runs, with a 429 and
the whole seconds until the next one would pass (Retry-After); nothing was written.

Every durable write goes through the database's one writer: one device's key looping
twin PATCHes once stretched every other caller's writes from 15 ms to 180 ms. People are
not limited here (their writes are paced by what they do, and their tools by the
sign-in throttle and their own rate limits where a route has one); nor are reads, nor
MQTT (the broker has its own per-client rate, `mqtt_rate_limit`).

The buckets live in memory (a restart refills them); a bucket full again is the same as
none, so full ones are swept when there are many, and memory follows the devices
writing now, not every device that ever wrote.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from edge.kernel.errors import TooManyAttempts

SWEEP_AT = 4096  # buckets kept before the full ones are swept


@dataclass
class _Bucket:
    level: float
    stamp: float


class WriteRate:
    def __init__(self, rate: int, burst: int, now: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst = rate, burst
        self._now = now
        self._buckets: dict[str, _Bucket] = {}
        self._sweep_at = SWEEP_AT

    def take(self, device_id: str) -> None:
        """One write of this device, or TooManyAttempts (nothing taken) when it has none
        left."""
        now = self._now()
        bucket = self._buckets.get(device_id)
        if bucket is None:
            self._sweep(now)
            bucket = self._buckets[device_id] = _Bucket(float(self.burst), now)
        bucket.level = min(float(self.burst), bucket.level + (now - bucket.stamp) * self.rate)
        bucket.stamp = now
        if bucket.level < 1.0:
            wait = max(1, math.ceil((1.0 - bucket.level) / self.rate))
            raise TooManyAttempts(
                f"Too many writes from this device: at most {self.rate} a second"
                f" (device_write_rate), bursts of {self.burst}; retry in {wait} s",
                wait,
            )
        bucket.level -= 1.0

    def _sweep(self, now: float) -> None:
        """Forget the buckets full again, once there are `_sweep_at` of them."""
        if len(self._buckets) < self._sweep_at:
            return
        full = [
            k
            for k, b in self._buckets.items()
            if b.level + (now - b.stamp) * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]
        self._sweep_at = max(SWEEP_AT, 2 * len(self._buckets))

    def __len__(self) -> int:
        return len(self._buckets)
