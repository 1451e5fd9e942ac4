"""How long to wait before connecting again: exponential, capped, with jitter.

A fleet that lost its server all at once must not come back all at once: each wait is
drawn between half and all of the current step, and the step doubles with every failed
attempt up to `longest`. A connection the broker accepted starts the steps over.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class Backoff:
    shortest: float = 1.0
    longest: float = 60.0
    failures: int = 0
    _random: random.Random = field(default_factory=random.Random, repr=False)

    def next_wait(self) -> float:
        """The seconds to wait before the next attempt; counts this failure."""
        step = min(self.longest, self.shortest * 2.0**self.failures)
        self.failures += 1
        return self._random.uniform(step / 2, step)

    def succeeded(self) -> None:
        self.failures = 0
