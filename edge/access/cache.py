"""Values kept in memory between requests, dropped whenever an epoch moves: callers
(keyed by principal, under the access epoch) and what a GET of a user shows about them
(`edge/accounts/user_facts.py`, under the access and users epochs).

Building a caller costs two point queries (roles held, org-level access); each target
the caller then touches costs one more. Keeping callers saves that work for every later
request of the same session, and keeps the answers they learnt. Any write that could
change an answer (an access object, a role, group or project suspended, moved or
deleted) bumps the access epoch inside its transaction (migration 0007's triggers), and
the cache reads the epoch (one point read of a one-row table, once per read snapshot) on
every use: a change made by this process or any other counts from the next request on,
with no stale window. An epoch is any value that compares equal while nothing changed (an
integer, or a tuple of several).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")
DEFAULT_MAX_ENTRIES = 10_000


class EpochCache(Generic[V]):
    def __init__(
        self, read_epoch: Callable[[], Hashable], *, max_entries: int = DEFAULT_MAX_ENTRIES
    ) -> None:
        self._read_epoch = read_epoch
        self._max = max_entries
        self._entries: OrderedDict[Hashable, V] = OrderedDict()
        self._epoch: Hashable = None

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> V | None:
        self._sync()
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        return found

    def put(self, key: Hashable, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()

    def _sync(self) -> None:
        epoch = self._read_epoch()
        if epoch != self._epoch:
            self._entries.clear()
            self._epoch = epoch
