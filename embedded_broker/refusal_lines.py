"""Refusals that cannot flood the log: every refusal is counted by its caller (GET
/metrics), and a line is written at most once every LOG_SECONDS per key (an account and
the limit it met; a kind of refused connection and the client's address), carrying how
many refusals of that key it stands for.

A single host opening connections in a loop was refused thousands of times a second, and
each refusal was a WARNING line: the disk and the log writer's queue filled, and the lines
an operator needed were dropped. Now the first refusal of a key is logged at once (an
attack shows while it goes on), and the next line of that key, LOG_SECONDS later at the
earliest, says how many refusals there were since the last one.

The keys are bounded (MAX_KEYS): past it the key whose line is oldest is forgotten (its
refusals since that line are in the metrics only), so the table cannot grow without limit
however many addresses a flood comes from. Time is the kernel clock's, so tests move it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from datetime import datetime, timedelta

from edge.kernel import clock

LOG_SECONDS = 60.0
MAX_KEYS = 10_000


@dataclass
class _Key:
    logged: datetime  # when its last line was written
    since: int = 0  # its refusals since that line, not logged yet


class RefusalLines:
    """For each key, when its last line was written and how many refusals came since."""

    def __init__(self, seconds: float = LOG_SECONDS, max_keys: int = MAX_KEYS) -> None:
        self._interval = timedelta(seconds=seconds)
        self._max_keys = max_keys
        self._keys: OrderedDict[Hashable, _Key] = OrderedDict()  # oldest line first

    def __len__(self) -> int:
        return len(self._keys)

    def due(self, key: Hashable) -> int:
        """Count one refusal of `key`. How many refusals the line to write now stands for
        (this one and those since the key's last line), or 0: no line is due yet."""
        now = clock.now()
        found = self._keys.get(key)
        if found is not None and now - found.logged < self._interval:
            found.since += 1
            return 0
        self._keys[key] = _Key(now)
        self._keys.move_to_end(key)
        while len(self._keys) > self._max_keys:
            self._keys.popitem(last=False)
        return 1 if found is None else found.since + 1
