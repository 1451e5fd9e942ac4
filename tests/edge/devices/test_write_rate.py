"""The pace of a device's HTTP writes (edge/devices/write_rate.py) on a clock the test
moves: the burst, the refill, an honest Retry-After, one bucket per device, and memory
that follows the devices writing now."""

from __future__ import annotations

import pytest

from edge.devices import write_rate
from edge.devices.write_rate import WriteRate
from edge.kernel.errors import TooManyAttempts


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def refused_for(rate: WriteRate, device_id: str) -> int:
    with pytest.raises(TooManyAttempts) as refused:
        rate.take(device_id)
    return refused.value.retry_after


def test_a_burst_then_the_rate_with_an_honest_retry_after() -> None:
    clock = Clock()
    rate = WriteRate(2, 4, clock)
    for _ in range(4):
        rate.take("d1")
    assert refused_for(rate, "d1") == 1  # half a second to one more, said as whole seconds
    rate.take("d2")  # another device has its own bucket
    clock.now += 0.5
    rate.take("d1")  # the half second brought one
    assert refused_for(rate, "d1") == 1
    clock.now += 60
    for _ in range(4):  # never more than the burst, however long it waited
        rate.take("d1")
    assert refused_for(rate, "d1") == 1


def test_a_slow_rate_says_how_long_to_wait() -> None:
    clock = Clock()
    rate = WriteRate(1, 1, clock)
    rate.take("d1")
    clock.now += 0.25
    assert refused_for(rate, "d1") == 1
    slow = WriteRate(1, 2, clock)  # a refusal takes nothing: the bucket is not driven below
    slow.take("d1")
    slow.take("d1")
    for _ in range(3):
        assert refused_for(slow, "d1") == 1


def test_full_buckets_are_forgotten_when_there_are_many(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(write_rate, "SWEEP_AT", 3)
    clock = Clock()
    rate = WriteRate(1, 2, clock)
    for device in ("a", "b", "c"):
        rate.take(device)
    clock.now += 0.5  # a, b and c are not full yet: nothing to forget
    rate.take("d")
    assert len(rate) == 4
    clock.now += 2  # all full again: the same as no bucket
    for device in ("e", "f"):  # the next sweep comes at twice what the last one kept
        rate.take(device)
    assert len(rate) == 6
    rate.take("g")
    assert len(rate) == 3  # e and f, just written, are kept with g; a to d are forgotten
