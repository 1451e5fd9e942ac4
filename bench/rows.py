"""The figures a benchmark hands to the report (bench/report.py), one `Row` each.

A row is one figure of edge beside its reference, measured in the same run (the bare
aiohttp + SQLite handler, dd, MD5, Mosquitto, a direct TCP copy, or edge itself at the
small size), the ratio, the target the issues set, and how we know the load generator was
not the limit (`load`: the server's CPU beside the generator's). Each benchmark module has
`rows(quick)`, which runs it (printing its own tables as its main() does) and returns its
rows; `quick` picks small sizes so that the whole report takes minutes.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    name: str
    edge: float
    unit: str
    reference: str = ""  # what the figure is measured against; "" when nothing is
    reference_value: float | None = None
    floor: float | None = None  # the target: ratio at least this
    ceiling: float | None = None  # or: the figure itself at most this
    lower_is_better: bool = False  # times, latencies, memory
    load: str = ""  # server CPU / load generator CPU, where it tells saturation
    command: str = ""
    passed: bool | None = None  # the benchmark's own verdict, where its rule is not a ratio

    @property
    def ratio(self) -> float | None:
        """How edge does against the reference: above 1 is better, whatever the unit."""
        if not self.reference_value or not self.edge:
            return None
        if self.lower_is_better:
            return self.reference_value / self.edge
        return self.edge / self.reference_value

    @property
    def target(self) -> str:
        if self.floor is not None:
            return f">= {self.floor:g}x"
        if self.ceiling is not None:
            return f"<= {self.ceiling:g} {self.unit}".rstrip()
        return ""

    @property
    def met(self) -> bool | None:
        if self.passed is not None:
            return self.passed
        if self.floor is not None:
            return self.ratio is not None and self.ratio >= self.floor
        if self.ceiling is not None:
            return self.edge <= self.ceiling
        return None


class Skipped(Exception):
    """A benchmark that cannot run here (a missing tool or build); the message says why."""


def command(module: str, *args: object) -> str:
    """The command line that reproduces a module's figures."""
    return " ".join(["python -m", module, *(str(a) for a in args)])


def cpu(server: float, generator: float) -> str:
    """Shares of one core (1.0 = one core)."""
    return f"srv {server * 100:.0f}% / gen {generator * 100:.0f}%"


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
