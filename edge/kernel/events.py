"""A typed callback list: how one part of the server tells others that something happened,
in this process, without knowing who listens. The one mechanism for every such event:
presence (`Presence.events`, edge/devices/presence.py) and twins (`Twins.changes`,
edge/twins/twins.py) emit on it; the live-changes work (#30) listens there and carries
them on to SSE and MQTT.

Listeners run in line, on the event loop, in the order they were added; each must be
quick and must not raise (one that does is logged and the others still run). Work that
takes time is started by the listener as a task of its own. An event's repr is what that
log line shows, so an event that carries data people set (a twin) keeps it out of its
repr. When the server grows into several processes, a listener is where an event crosses
to the internal bus.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

E = TypeVar("E")
log = logging.getLogger("edge.events")


class Hook(Generic[E]):
    def __init__(self, name: str) -> None:
        self.name = name
        self._listeners: list[Callable[[E], None]] = []

    def listen(self, listener: Callable[[E], None]) -> None:
        self._listeners.append(listener)

    def emit(self, event: E) -> None:
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:
                log.exception("%s: a listener failed on %r", self.name, event)
