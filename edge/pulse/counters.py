"""What the pulse counts between two flushes, in memory, added to on the paths that exist
anyway: the outer middleware once per answered request, the sign-in throttle once per
failure, presence once per transition. Each addition is one dictionary update on the event
loop (no lock, no I/O); the flush swaps the dictionaries out (`take`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from edge.kernel.principal import Principal

Source = Callable[[], Mapping[str, int]]  # counts by organization since the last call


class Transition(Protocol):
    """A device came online or went offline (edge/devices/presence.py's PresenceEvent, by
    shape: the pulse stands below the devices room)."""

    @property
    def org_id(self) -> str: ...

    @property
    def online(self) -> bool: ...


@dataclass
class Counts:
    """One flush's worth: each by organization, and the site's totals (requests and sign-in
    failures with no organization count in the totals alone)."""

    requests: dict[str, int] = field(default_factory=dict)
    requests_total: int = 0
    sign_in_failures: dict[str, int] = field(default_factory=dict)
    sign_in_failures_total: int = 0
    mqtt_messages: dict[str, int] = field(default_factory=dict)

    def add(self, other: Counts) -> None:
        """Put counts back (a flush that could not be written is counted at the next)."""
        _merge(self.requests, other.requests)
        _merge(self.sign_in_failures, other.sign_in_failures)
        _merge(self.mqtt_messages, other.mqtt_messages)
        self.requests_total += other.requests_total
        self.sign_in_failures_total += other.sign_in_failures_total


class Counters:
    def __init__(self) -> None:
        self._counts = Counts()
        self.online: dict[str, int] = {}  # devices online now, by organization
        self.mqtt: Source | None = None  # the broker's, handed in by edge/app.py

    def request(self, caller: Principal | None) -> None:
        """An answered request; an organization's when its caller is one of its users or
        devices (staff and anonymous callers count in the site's total alone)."""
        counts = self._counts
        counts.requests_total += 1
        if caller is not None and caller.org_id is not None and not caller.is_staff:
            counts.requests[caller.org_id] = counts.requests.get(caller.org_id, 0) + 1

    def sign_in_failed(self, org_id: str | None) -> None:
        """A wrong password or MFA code (the throttle's failures hook)."""
        counts = self._counts
        counts.sign_in_failures_total += 1
        if org_id is not None:
            counts.sign_in_failures[org_id] = counts.sign_in_failures.get(org_id, 0) + 1

    def presence(self, event: Transition) -> None:
        """A device's first connection opened or its last closed (presence's events)."""
        count = self.online.get(event.org_id, 0) + (1 if event.online else -1)
        if count > 0:
            self.online[event.org_id] = count
        else:
            self.online.pop(event.org_id, None)

    def take(self) -> Counts:
        """The counts since the last take, the broker's messages with them."""
        taken, self._counts = self._counts, Counts()
        if self.mqtt is not None:
            _merge(taken.mqtt_messages, self.mqtt())
        return taken

    def give_back(self, counts: Counts) -> None:
        self._counts.add(counts)


def _merge(into: dict[str, int], more: Mapping[str, int]) -> None:
    for key, value in more.items():
        into[key] = into.get(key, 0) + value
