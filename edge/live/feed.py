"""The change feed: every change numbered once, the recent ones kept for resuming.

IDs are integers that keep increasing across restarts without a write per event: run `r`
(a durable counter moved on at each start, storage/live_runs.py) numbers each
organization's events from `r * RUN_SPAN + 1`, one counter per organization, so an ID (and
the gaps between two) tells a client nothing of other organizations' changes, only of its
own organization's that it may not read. The window of recent events is held in memory,
bounded both by count and by age (`events_window_count`, `events_window_seconds`): a client
that resumes from an ID still inside it gets everything of its organization after that ID;
from an ID before it, of an earlier run (a restart lost the window), or not of this feed at
all, it is told to reload.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from edge.kernel import clock
from edge.kernel.events import Hook

RUN_SPAN = 10**12  # events one run may number; a run that told more would need a restart
KINDS = ("data", "files", "presence", "twins", "jobs")


@dataclass(frozen=True)
class Change:
    """One change as the feed tells it. `subject` is the group (data, files) or the device
    (presence, twins) it concerns; `path` the data or file path (None for devices); `body`
    what a client receives besides the ID, never a value it would need rights to read
    beyond those `readable.py` checks."""

    id: int
    kind: str
    org_id: str
    subject: str
    path: str | None
    body: Mapping[str, Any]
    at: float  # monotonic seconds, for the window


class Feed:
    def __init__(self, window_seconds: float, window_count: int) -> None:
        self._first = 1  # until `begin` names this run
        self._last: dict[str, int] = {}  # each organization's last ID told in this run
        self._window_seconds = window_seconds
        self._recent: deque[Change] = deque(maxlen=window_count)
        self.told: Hook[Change] = Hook("live")  # every change, once numbered
        self.monotonic: Callable[[], float] = time.monotonic

    def begin(self, run: int) -> None:
        """Number from run `run`'s first ID on; what an earlier run told is gone."""
        self._first = run * RUN_SPAN + 1
        self._last.clear()
        self._recent.clear()

    def last_id(self, org_id: str) -> int:
        """The ID of the organization's last change told (one below the run's first when
        none was)."""
        return self._last.get(org_id, self._first - 1)

    def publish(
        self, kind: str, org_id: str, subject: str, path: str | None, fields: Mapping[str, Any]
    ) -> Change:
        """Number the change, keep it in the window and tell it to every listener."""
        body = {"kind": kind, "org_id": org_id, **fields, "date": clock.now_iso()}
        number = self._last[org_id] = self.last_id(org_id) + 1
        change = Change(number, kind, org_id, subject, path, body, self.monotonic())
        self._forget_old(change.at)
        self._recent.append(change)
        self.told.emit(change)
        return change

    def since(self, org_id: str, last_id: int) -> list[Change] | None:
        """The organization's changes after `last_id`, or None when the window no longer
        holds all of them (the client must reload). Its IDs have no gaps, so the window
        holds them all when it holds the one right after `last_id`."""
        self._forget_old(self.monotonic())
        if last_id < self._first - 1 or last_id > self.last_id(org_id):
            return None
        missed = [c for c in self._recent if c.org_id == org_id and c.id > last_id]
        if last_id < self.last_id(org_id) and (not missed or missed[0].id != last_id + 1):
            return None
        return missed

    def _forget_old(self, now: float) -> None:
        while self._recent and now - self._recent[0].at > self._window_seconds:
            self._recent.popleft()
