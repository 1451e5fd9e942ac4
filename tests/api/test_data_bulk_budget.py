"""One read budget per bulk GET, not one per job: the values answered (PAGE_BYTES), the rows
read (the scan cap) and the pattern-matching time are shared by every job of the request;
a job that finds the budget spent answers as a page cut short does (docs/data.md, "Bulk").

100 cascade jobs answered 343 MiB with a 4 MiB page each, and 100 jobs of `(a|a)+$` ran
4-16 s with 250 ms each (#23)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from edge.data import matchers, pages, reads
from edge.data.plans import MAX_PATH_FILTER_SCAN_ITEMS
from tests.data import seed
from tests.world import World

WHO = "org_admin"


def sizes_sent(body: dict[str, Any]) -> int:
    """The stored bytes of the values a bulk GET answered (each a string of x's)."""
    total = 0
    for found in body["data_by_path"].values():
        for entry in found if isinstance(found, list) else [found]:
            total += len(json.dumps(entry["value"]))
    return total


async def page_on(world: World, path: str, key: Any) -> list[str]:
    """The rest of a cascade after `key`, one job a request, every page followed."""
    seen: list[str] = []
    while key is not None:
        job = {"paths": [path], "cascade": True, "limit": 1000, "last_evaluated_key": key}
        status, body = await world.bulk_data(WHO, {"method": "GET", "jobs": [job]})
        assert status == 200, body
        seen += [e["path"] for e in body["data_by_path"].get(path, [])]
        key = body.get("last_evaluated_key_by_path", {}).get(path)
    return seen


async def test_the_jobs_of_a_bulk_get_share_one_page_budget(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "PAGE_BYTES", 10_000)
    for job in range(5):
        for leaf in ("a", "b"):
            await world.put_data(WHO, f"j{job}/{leaf}", "x" * 2_998)  # 3,000 bytes stored
    jobs = [{"paths": [f"j{job}"], "cascade": True, "limit": 1000} for job in range(5)]
    status, body = await world.bulk_data(WHO, {"method": "GET", "jobs": jobs})
    assert status == 200, body
    assert sizes_sent(body) <= 10_000  # was 30,000: 6,000 for each job
    got = {path: [e["path"] for e in found] for path, found in body["data_by_path"].items()}
    assert got == {"/j0": ["/j0/a", "/j0/b"], "/j1": ["/j1/a"], **{f"/j{i}": [] for i in (2, 3, 4)}}
    keys = body["last_evaluated_key_by_path"]
    assert set(keys) == {"/j1", "/j2", "/j3", "/j4"}
    assert await page_on(world, "/j1", keys["/j1"]) == ["/j1/b"]
    for i in (2, 3, 4):  # a job that read nothing resumes from its beginning
        assert await page_on(world, f"/j{i}", keys[f"/j{i}"]) == [f"/j{i}/a", f"/j{i}/b"]


async def test_a_job_sent_with_a_key_and_cut_short_gives_that_key_back(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "PAGE_BYTES", 5_000)
    for path in ("k/a", "k/b", "k/c", "big"):
        await world.put_data(WHO, path, "x" * 2_998)
    first = {"paths": ["k"], "cascade": True, "limit": 1}
    _, body = await world.bulk_data(WHO, {"method": "GET", "jobs": [first]})
    key = body["last_evaluated_key_by_path"]["/k"]
    jobs = [{"paths": ["big"]}, {**first, "limit": 10, "last_evaluated_key": key}]
    status, body = await world.bulk_data(WHO, {"method": "GET", "jobs": jobs})
    assert status == 200, body
    assert body["data_by_path"]["/k"] == [] and body["last_evaluated_key_by_path"]["/k"] == key
    assert await page_on(world, "/k", key) == ["/k/b", "/k/c"]  # after /k/a, sent first


async def test_entries_named_alone_past_the_budget_are_listed_unread(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "PAGE_BYTES", 10_000)
    names = [f"p{i}" for i in range(5)]
    for name in names:
        await world.put_data(WHO, name, "x" * 2_998)
    jobs = [{"paths": names[:2]}, {"paths": [*names[2:], "nothing"]}]
    status, body = await world.bulk_data(WHO, {"method": "GET", "jobs": jobs})
    assert status == 200, body
    assert list(body["data_by_path"]) == ["/p0", "/p1", "/p2"]
    assert body["unread_paths"] == ["/p3", "/p4"]
    assert body["missing_paths"] == ["/nothing"]  # sizes are looked up: that one has none


async def test_the_first_entry_of_a_request_is_sent_whatever_its_size(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "PAGE_BYTES", 1_000)
    await world.put_data(WHO, "huge", "x" * 5_000)
    await world.put_data(WHO, "small", 1)
    jobs = [{"paths": ["huge", "small"]}]
    _, body = await world.bulk_data(WHO, {"method": "GET", "jobs": jobs})
    assert list(body["data_by_path"]) == ["/huge"] and body["unread_paths"] == ["/small"]


async def test_the_jobs_of_a_bulk_get_share_one_scan_cap(world: World) -> None:
    """Each job read up to the 10,000 rows of the scan cap: 100 filtered jobs, a million."""
    half = MAX_PATH_FILTER_SCAN_ITEMS * 6 // 10
    await seed(world, [f"/a/{i:05d}" for i in range(half)] + [f"/b/{i:05d}" for i in range(half)])
    job = {"cascade": True, "paths_only": True, "limit": 1000, "path_filter": "none$"}
    jobs = [{**job, "paths": ["a"]}, {**job, "paths": ["b"]}]
    status, body = await world.bulk_data(WHO, {"method": "GET", "jobs": jobs})
    assert status == 200, body
    assert body["data_by_path"]["/a"] == {"paths": []}  # 6,000 rows read, nothing left
    cut = body["data_by_path"]["/b"]
    assert cut["paths"] == [] and "last_evaluated_key" in cut  # 4,000 read, then the cap
    rest = {**job, "paths": ["b"], "path_filter": "/b/0[0-9]{4}$", "limit": 1}
    rest["last_evaluated_key"] = cut["last_evaluated_key"]
    _, body = await world.bulk_data(WHO, {"method": "GET", "jobs": [rest]})
    assert body["data_by_path"]["/b"]["paths"] == [f"/b/{MAX_PATH_FILTER_SCAN_ITEMS - half:05d}"]


class StepClock:
    """A matching clock that moves `step` seconds at each reading: each match (read before
    and after) charges exactly `step`, whatever the machine's speed."""

    def __init__(self, step: float) -> None:
        self._ticks = itertools.count()
        self._step = step

    def __call__(self) -> float:
        return next(self._ticks) * self._step


async def test_the_jobs_of_a_bulk_get_share_one_pattern_budget(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each match is charged 0.1 s of the request's 0.25 s: two jobs of two rows (0.4 s in
    all) ran out of it; each job alone (0.2 s) did not, and did not before either, when
    every job had 0.25 s of its own."""
    await seed(world, ["/r/a/1", "/r/a/2", "/r/b/1", "/r/b/2"])
    monkeypatch.setattr(matchers, "_clock", StepClock(0.1))
    job = {"cascade": True, "paths_only": True, "path_filter": "(a|a)+$"}
    one = {"method": "GET", "jobs": [{**job, "paths": ["r/a"]}]}
    status, body = await world.bulk_data(WHO, one)
    assert (status, body["data_by_path"]["/r/a"]) == (200, {"paths": []}), body
    both = {"method": "GET", "jobs": [{**job, "paths": ["r/a"]}, {**job, "paths": ["r/b"]}]}
    status, body = await world.bulk_data(WHO, both)
    assert (status, body) == (
        400,
        {"message": "path_filter: took too long to match; simplify the pattern"},
    )


async def test_every_job_charges_the_same_pattern_budget(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The accounting itself: every Matcher of one request holds the one budget, and what
    all of them spent is what that budget lost."""
    made: list[matchers.Matcher] = []

    class Recorded(matchers.Matcher):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            made.append(self)

    await seed(world, [f"/m/{job}/{i}" for job in range(10) for i in range(3)])
    monkeypatch.setattr(reads, "Matcher", Recorded)
    monkeypatch.setattr(matchers, "_clock", StepClock(0.001))
    jobs = [{"paths": [f"m/{j}"], "cascade": True, "path_filter": "[0-9]$"} for j in range(10)]
    status, _ = await world.bulk_data(WHO, {"method": "GET", "jobs": jobs})
    assert status == 200
    assert len(made) == 10 and len({id(m.budget) for m in made}) == 1
    assert made[0].budget.left == pytest.approx(0.25 - 30 * 0.001)  # 30 rows matched
