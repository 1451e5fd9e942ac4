"""edge/pulse/counters.py and shared.py: what the paths add, per organization and in the
site's totals; a take empties them; the broker's counts reach both billing and the pulse."""

from __future__ import annotations

from dataclasses import dataclass

from edge.kernel.principal import Principal
from edge.pulse.counters import Counters
from edge.pulse.shared import Shared


@dataclass(frozen=True)
class Went:
    org_id: str
    online: bool


def test_requests_count_for_the_callers_org_and_in_the_total() -> None:
    counters = Counters()
    counters.request(Principal("user", "u1", "s", "org-a"))
    counters.request(Principal("device", "d1", None, "org-a"))
    counters.request(Principal("user", "u2", "s", "org-b"))
    counters.request(Principal("staff", "st", "s", "org-a"))  # staff: the total alone
    counters.request(None)  # anonymous: the total alone
    taken = counters.take()
    assert taken.requests == {"org-a": 2, "org-b": 1}
    assert taken.requests_total == 5
    assert counters.take().requests_total == 0  # a take empties them


def test_sign_in_failures_of_no_org_count_in_the_total_alone() -> None:
    counters = Counters()
    counters.sign_in_failed("org-a")
    counters.sign_in_failed(None)
    taken = counters.take()
    assert (taken.sign_in_failures, taken.sign_in_failures_total) == ({"org-a": 1}, 2)


def test_devices_online_follow_presence_per_org() -> None:
    counters = Counters()
    for event in (Went("a", True), Went("a", True), Went("b", True), Went("a", False)):
        counters.presence(event)
    assert counters.online == {"a": 1, "b": 1}
    counters.presence(Went("b", False))
    assert counters.online == {"a": 1}  # an org with none online is forgotten


def test_counts_given_back_are_taken_with_the_next() -> None:
    counters = Counters()
    counters.request(Principal("user", "u", "s", "org-a"))
    taken = counters.take()
    counters.request(Principal("user", "u", "s", "org-a"))
    counters.give_back(taken)
    again = counters.take()
    assert (again.requests, again.requests_total) == ({"org-a": 2}, 2)


def test_each_reader_of_a_shared_source_gets_every_count_once() -> None:
    fresh: list[dict[str, int]] = [{"a": 2}, {"a": 1, "b": 5}, {}, {}]
    shared = Shared(lambda: fresh.pop(0))
    billing, pulse = shared.reader("billing"), shared.reader("pulse")
    assert billing() == {"a": 2}
    assert pulse() == {"a": 3, "b": 5}  # its share of the first take and the second
    assert billing() == {"a": 1, "b": 5}
    assert pulse() == {}


def test_the_broker_counts_arrive_with_a_take() -> None:
    counters = Counters()
    counters.mqtt = lambda: {"org-a": 7}
    assert counters.take().mqtt_messages == {"org-a": 7}
