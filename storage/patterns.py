"""The REGEXP function of every connection, and the one time budget each request has for
all of its pattern matching.

A per-value time limit is not enough: a pattern that takes 40 ms per value stays under a
50 ms limit and still holds a reader thread for 40 seconds over a thousand rows. So the
time spent matching is counted against a budget (`PatternBudget`, REQUEST_BUDGET_SECONDS
per request); each match may use what is left, and once it is spent the query stops with
PatternTooSlow. The budget of the running query is kept per thread (`spending`), because
each query runs on one reader thread. Without a budget (a query outside a request) a single
match still stops after REQUEST_BUDGET_SECONDS.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import apsw
import regex

T = TypeVar("T")
REQUEST_BUDGET_SECONDS = 0.25
_clock = time.thread_time  # CPU time: a loaded machine must not turn a walk into a 400
_running = threading.local()


class PatternTooSlow(Exception):
    """User-supplied regular expressions used up their time budget."""


class PatternBudget:
    """Seconds of pattern matching left to one request (shared by all of its queries)."""

    def __init__(self, seconds: float = REQUEST_BUDGET_SECONDS) -> None:
        self.left = seconds

    def spend(self, seconds: float) -> None:
        self.left -= seconds


@contextmanager
def spending(budget: PatternBudget) -> Iterator[None]:
    """Count the REGEXP matches of queries run on this thread inside the block against
    `budget`."""
    before = getattr(_running, "budget", None)
    _running.budget = budget
    try:
        yield
    finally:
        _running.budget = before


def within(
    budget: PatternBudget, query: Callable[[apsw.Connection], T]
) -> Callable[[apsw.Connection], T]:
    """`query`, made to count its pattern matching against `budget` on whichever thread
    it runs."""

    def run(conn: apsw.Connection) -> T:
        with spending(budget):
            return query(conn)

    return run


def regexp(*args: Any) -> int:
    """SQLite's `pattern REGEXP value`, i.e. regexp(pattern, value)."""
    pattern, value = args
    if value is None:
        return 0
    budget: PatternBudget | None = getattr(_running, "budget", None)
    left = REQUEST_BUDGET_SECONDS if budget is None else budget.left
    if left <= 0:
        raise PatternTooSlow(str(pattern))
    began = _clock()
    try:
        found = regex.search(str(pattern), str(value), timeout=left) is not None
    except TimeoutError:
        found = None
    if budget is not None:
        budget.spend(_clock() - began)
    if found is None:
        raise PatternTooSlow(str(pattern))
    return int(found)
