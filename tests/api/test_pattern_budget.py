"""One time budget per request for all of its regular-expression matching: many values
that are each quick enough still stop the request once their total passes the budget.

The budget's clock is replaced by one that moves 10 ms per reading, so the test does not
depend on how fast this machine matches."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count

import pytest

from storage import patterns
from tests.conftest import Api

TICK = 0.01  # seconds per clock reading: each match "costs" 10 ms


@pytest.fixture
def slow_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    ticks = count()
    monkeypatch.setattr(patterns, "_clock", lambda: next(ticks) * TICK)
    yield


async def test_the_budget_covers_every_value_of_a_request(
    api: Api, staff_token: str, slow_clock: None
) -> None:
    for n in range(40):  # 40 matches of 10 ms: 0.4 s, each far under any per-value limit
        await api.create_org(staff_token, name=f"Org {n:02d}")
    status, body = await api.call("GET", "/v2/orgs", staff_token, params={"name_regex": "^Org"})
    assert (status, body) == (
        400,
        {"message": "A regular expression filter took too long; simplify it"},
    )


async def test_a_request_within_its_budget_is_answered(
    api: Api, staff_token: str, slow_clock: None
) -> None:
    for n in range(5):  # 5 matches of 10 ms: within 0.25 s
        await api.create_org(staff_token, name=f"Org {n:02d}")
    status, body = await api.call("GET", "/v2/orgs", staff_token, params={"name_regex": "^Org"})
    assert status == 200 and len(body["orgs"]) == 5


async def test_each_request_has_its_own_budget(
    api: Api, staff_token: str, slow_clock: None
) -> None:
    for n in range(5):
        await api.create_org(staff_token, name=f"Org {n:02d}")
    for _ in range(10):  # 10 requests of 50 ms each: more than one budget in all
        status, _ = await api.call("GET", "/v2/orgs", staff_token, params={"name_regex": "^Org"})
        assert status == 200


def test_the_budget_is_spent_across_queries() -> None:
    budget = patterns.PatternBudget(0.0)
    with patterns.spending(budget), pytest.raises(patterns.PatternTooSlow):
        patterns.regexp("a", "a")
    assert patterns.regexp("a", "a") == 1  # outside the request, no budget is spent
