"""Lists of data: cascade pages, limits, continuation keys (objects, JSON-encoded back,
tamper-proof), filter-then-paginate with the scan cap and exact resumption, index and
date filters, search, ordering, counts, and a hostile pattern (docs/data.md, "Reading")."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from edge.data import pages
from edge.data.plans import MAX_PATH_FILTER_SCAN_ITEMS
from tests.data import seed
from tests.world import World


async def page_through(world: World, who: str, path: str, **params: Any) -> list[list[str]]:
    """Every page of a cascade read (paths only), following the continuation keys."""
    pages: list[list[str]] = []
    key: Any = None
    while True:
        query = {"cascade": "true", "paths_only": "true", **params}
        if key is not None:
            query["last_evaluated_key"] = json.dumps(key)
        status, body = await world.data(who, "GET", path, params=query)
        assert status == 200, body
        pages.append(body["paths"])
        key = body.get("last_evaluated_key")
        if key is None:
            return pages
        assert isinstance(key, dict)  # answered as a JSON object


async def test_cascade_lists_the_path_and_its_subtree_in_path_order(world: World) -> None:
    who = "org_admin"
    for path in ("a/b", "a", "a-b", "a/c/d", "b"):
        await world.put_data(who, path, path)
    status, body = await world.data(who, "GET", "a", params={"cascade": "true"})
    assert status == 200
    assert [e["path"] for e in body["data"]] == ["/a", "/a/b", "/a/c/d"]
    _, body = await world.data(
        who, "GET", "a", params={"cascade": "", "desc": "true", "paths_only": ""}
    )
    assert body["paths"] == ["/a/c/d", "/a/b", "/a"]


async def test_a_page_ends_where_its_values_pass_the_byte_budget(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a thousand values of 1 MiB decoded at once: a page stops at PAGE_BYTES of stored
    JSON (its first entry whatever its size), and the next resumes right after it."""
    monkeypatch.setattr(pages, "PAGE_BYTES", 10_000)
    who = "org_admin"
    sizes = {"/big/00": 3_000, "/big/01": 3_000, "/big/02": 3_000, "/big/03": 12_000}
    sizes |= {f"/big/{i:02d}": 4_000 for i in range(4, 9)}
    for path, size in sizes.items():
        await world.put_data(who, path, "x" * size)
    seen: list[str] = []
    counts: list[int] = []
    key: Any = None
    while True:
        query = {"cascade": "true", "limit": "1000"}
        if key is not None:
            query["last_evaluated_key"] = json.dumps(key)
        status, body = await world.data(who, "GET", "big", params=query)
        assert status == 200, body
        seen += [entry["path"] for entry in body["data"]]
        counts.append(len(body["data"]))
        key = body.get("last_evaluated_key")
        if key is None:
            break
    assert seen == list(sizes)  # each once, in order
    assert counts == [3, 1, 2, 2, 1]  # 9,000 bytes; the 12,000 alone; then 8,000 a page
    _, body = await world.data(who, "GET", "big", params={"cascade": "", "paths_only": ""})
    assert len(body["paths"]) == 9 and "last_evaluated_key" not in body  # paths are small


async def test_a_key_after_the_longest_non_ascii_path_fits_in_a_url(world: World) -> None:
    """The key names the path once (not as both row and sort value on a path walk): a
    1,024-character path of 'é', escaped in JSON and then in the URL, is 8 KiB."""
    who = "org_admin"
    long = "/l/" + "é" * 1021
    for path in ("/l/a", long, "/l/ê"):
        await world.put_data(who, path, 1)
    pages = await page_through(world, who, "l", limit="1")
    assert pages == [["/l/a"], [long], ["/l/ê"]]  # the second key names the long path


@pytest.mark.parametrize("limit", ["0", "1001", "ten", "-1"])
async def test_limit_is_1_to_1000(world: World, limit: str) -> None:
    who = "org_admin"
    status, body = await world.data(who, "GET", "", params={"cascade": "", "limit": limit})
    assert status == 400 and body["message"].startswith("limit: ")


async def test_pages_resume_exactly_and_cover_everything_once(world: World) -> None:
    who = "org_admin"
    paths = [f"/p/{i:04d}" for i in range(250)]
    await seed(world, paths)
    pages = await page_through(world, who, "p", limit="100")
    assert [len(p) for p in pages] == [100, 100, 50]
    assert sum(pages, []) == paths


async def test_default_limit_is_100(world: World) -> None:
    who = "org_admin"
    await seed(world, [f"/d/{i:03d}" for i in range(150)])
    _, body = await world.data(who, "GET", "d", params={"cascade": "", "paths_only": ""})
    assert len(body["paths"]) == 100 and "last_evaluated_key" in body


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("{not json", "last_evaluated_key: must be valid JSON"),
        (
            '{"id": "/p/0001", "v": "/p/0001", "sig": "forged"}',
            "last_evaluated_key: is not a continuation key of this list",
        ),
        ("[1]", "last_evaluated_key: is not a continuation key of this list"),
    ],
)
async def test_bad_and_tampered_keys_are_refused(world: World, key: str, message: str) -> None:
    who = "org_admin"
    await seed(world, [f"/p/{i:04d}" for i in range(5)])
    params = {"cascade": "", "last_evaluated_key": key}
    assert await world.data(who, "GET", "p", params=params) == (400, {"message": message})


async def test_a_key_edited_to_skip_ahead_or_used_elsewhere_is_refused(world: World) -> None:
    who = "org_admin"
    await seed(world, [f"/p/{i:04d}" for i in range(5)] + ["/q/1"])
    _, body = await world.data(who, "GET", "p", params={"cascade": "", "limit": "2"})
    key = body["last_evaluated_key"]
    edited = {**key, "id": "/p/0003"}
    status, _ = await world.data(
        who, "GET", "p", params={"cascade": "", "last_evaluated_key": json.dumps(edited)}
    )
    assert status == 400
    elsewhere = {"cascade": "", "last_evaluated_key": json.dumps(key)}
    assert (await world.data(who, "GET", "q", params=elsewhere))[0] == 400
    reversed_order = {**elsewhere, "desc": "true"}
    assert (await world.data(who, "GET", "p", params=reversed_order))[0] == 400


async def test_path_filter_stops_at_the_scan_cap_and_resumes_where_it_stopped(
    world: World,
) -> None:
    """25,000 entries, the matches only at the end: the first pages read 10,000 rows
    each and find nothing, yet the key moves on; the last page has every match."""
    who = "org_admin"
    total = 25_000
    await seed(world, [f"/s/{i:05d}" for i in range(total)])
    pages = await page_through(world, who, "s", path_filter=r"/s/2499[0-9]$", limit="1000")
    assert [len(p) for p in pages] == [0, 0, 10]
    assert pages[-1] == [f"/s/{i:05d}" for i in range(24990, 25000)]
    assert MAX_PATH_FILTER_SCAN_ITEMS == 10_000


async def test_path_filter_pages_hold_limit_matches_and_miss_none(world: World) -> None:
    who = "org_admin"
    paths = [f"/f/{i:04d}" for i in range(3000)]
    await seed(world, paths)
    pages = await page_through(world, who, "f", path_filter=r"7$", limit="37")
    expected = [p for p in paths if p.endswith("7")]
    assert sum(pages, []) == expected
    assert all(len(p) == 37 for p in pages[:-1])


async def test_a_hostile_pattern_is_a_400_within_the_budget(world: World) -> None:
    who = "org_admin"
    await seed(world, ["/x/" + "a" * 40 + "!" + str(i) for i in range(50)])
    began = time.process_time()  # CPU time (the server is in this process): not the load
    status, body = await world.data(
        who, "GET", "x", params={"cascade": "", "path_filter": r"^/x/(a|aa)+$"}
    )
    assert (status, body) == (
        400,
        {"message": "path_filter: took too long to match; simplify the pattern"},
    )
    assert time.process_time() - began < 5  # far from the minutes the pattern alone takes


async def test_an_invalid_pattern_is_a_400(world: World) -> None:
    who = "org_admin"
    status, body = await world.data(
        who, "GET", "", params={"cascade": "", "path_filter": "(unclosed"}
    )
    assert status == 400 and body["message"].startswith(
        "path_filter: is not a valid regular expression"
    )


async def index_world(world: World) -> str:
    who = "org_admin"
    rows = [
        ("k/1", {"unicode_1": "alpha", "unicode_2": "North hall", "number_1": 5}),
        ("k/2", {"unicode_1": "alpine", "unicode_2": "south hall", "number_1": 10}),
        ("k/3", {"unicode_1": "beta", "number_1": 10.5}),
        ("k/4", {"unicode_2": "Roof", "number_2": -1}),
        ("other/5", {"unicode_1": "alpha", "number_1": 1}),
    ]
    for path, index in rows:
        await world.put_data(who, path, {"at": path}, **index)
    return who


@pytest.mark.parametrize(
    ("params", "paths"),
    [
        ({"unicode_1": "alpha"}, ["/k/1"]),
        ({"unicode_1.sw": "alp"}, ["/k/1", "/k/2"]),
        ({"unicode_1_sw": "alp"}, ["/k/1", "/k/2"]),
        ({"unicode_2.contains": "hall"}, ["/k/1", "/k/2"]),
        ({"unicode_2.contains": "Hall"}, []),  # index text compares exactly
        ({"unicode_1.gte": "alpine"}, ["/k/2", "/k/3"]),  # inclusive
        ({"unicode_1.lte": "alpine"}, ["/k/1", "/k/2"]),
        ({"number_1": "10"}, ["/k/2"]),
        ({"number_1.gt": "5"}, ["/k/2", "/k/3"]),
        ({"number_1.gte": "5"}, ["/k/1", "/k/2", "/k/3"]),
        ({"number_1.lt": "10"}, ["/k/1"]),
        ({"number_1.lte": "10"}, ["/k/1", "/k/2"]),
        ({"number_2.lt": "0"}, ["/k/4"]),
        ({"unicode_1.sw": "al", "number_1.gt": "6"}, ["/k/2"]),
        ({"search": "hall"}, ["/k/1", "/k/2"]),
        ({"search": "nor HA"}, ["/k/1"]),  # every word, as a prefix, any case
        ({"search": "k", "search_fields": "unicode_1"}, []),
        ({"search": "roof", "search_fields": "unicode_2,path"}, ["/k/4"]),
        ({"order_by": "number_1"}, ["/k/1", "/k/2", "/k/3"]),  # only entries that have it
        ({"order_by": "number_1", "desc": "true"}, ["/k/3", "/k/2", "/k/1"]),
        ({"order_by": "unicode_1", "unicode_1.sw": "alp"}, ["/k/1", "/k/2"]),
    ],
)
async def test_index_filters_search_and_order(
    world: World, params: dict[str, str], paths: list[str]
) -> None:
    who = await index_world(world)
    status, body = await world.data(
        who, "GET", "k", params={"cascade": "", "paths_only": "", **params}
    )
    assert (status, body) == (200, {"paths": paths})


async def test_ordered_by_a_field_pages_resume_exactly(world: World) -> None:
    who = "org_admin"
    for i in range(9):
        await world.put_data(who, f"o/{i}", i, number_1=i % 3)
    pages = await page_through(world, who, "o", order_by="number_1", limit="2")
    assert sum(pages, []) == [
        "/o/0",
        "/o/3",
        "/o/6",
        "/o/1",
        "/o/4",
        "/o/7",
        "/o/2",
        "/o/5",
        "/o/8",
    ]


async def test_creator_and_date_filters(world: World) -> None:
    admin = "org_admin"
    other = await world.data_holder("other", {"/": {"can_read": True, "can_write": True}})
    await world.put_data(admin, "w/1", 1)
    await world.put_data(other, "w/2", 2)
    _, body = await world.data(admin, "GET", "w/2")
    stamp = body["data"]["created_date"]
    cases = [
        ({"created_by": world.id("other")}, ["/w/2"]),
        ({"last_updated_by": world.tenant.admin_id}, ["/w/1"]),
        ({"created_date.gte": stamp}, ["/w/2"]),
        ({"created_date.lt": stamp}, ["/w/1"]),
        ({"last_updated_date": stamp[:10]}, ["/w/1", "/w/2"]),  # a bare date: that day
        ({"created_date": stamp}, ["/w/2"]),
    ]
    for params, paths in cases:
        _, body = await world.data(
            admin, "GET", "w", params={"cascade": "", "paths_only": "", **params}
        )
        assert body == {"paths": paths}, params


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"unicode_1.gt": "a"}, "unicode_1.gt: 'gt' does not apply to unicode_1"),
        ({"colour": "red"}, "colour: is not a query parameter of this operation"),
        ({"order_by": "value"}, "order_by: cannot sort by 'value'"),
        ({"number_1": "many"}, "number_1: must be a number"),
        ({"search_fields": "value"}, "search_fields: 'value' is not searchable"),
        ({"created_date.gte": "soon"}, "created_date.gte: must be an ISO 8601 date or datetime"),
    ],
)
async def test_unknown_filters_are_400s_naming_them(
    world: World, params: dict[str, str], message: str
) -> None:
    who = "org_admin"
    status, body = await world.data(who, "GET", "", params={"cascade": "", **params})
    assert status == 400 and body["message"].startswith(message)


async def test_counts(world: World) -> None:
    who = "org_admin"
    await seed(world, [f"/c/{i:05d}" for i in range(12_000)])
    await seed(world, ["/c/00001/x"], unicode_1="tag")
    params = {"cascade": "", "object_count": "true", "page_count": "true", "limit": "1000"}
    status, body = await world.data(who, "GET", "c", params=params)
    assert (status, body) == (200, {"object_count": 12_001, "page_count": 13})
    _, body = await world.data(who, "GET", "c", params={**params, "unicode_1": "tag"})
    assert body == {"object_count": 1, "page_count": 1}
    # A count that filters in the walk reads at most the scan cap, and says where it stopped.
    _, body = await world.data(who, "GET", "c", params={**params, "path_filter": "9$"})
    # The first 10,000 rows read are /c/00000 .. /c/09998 and /c/00001/x: 999 end in 9.
    assert body["object_count"] == 999 and "last_evaluated_key" in body
    key = json.dumps(body["last_evaluated_key"])
    _, body = await world.data(
        who, "GET", "c", params={**params, "path_filter": "9$", "last_evaluated_key": key}
    )
    assert body == {"object_count": 201, "page_count": 1}  # /c/09999 .. /c/11999


async def test_verify_reports_verified(world: World) -> None:
    who = "org_admin"
    await world.put_data(who, "v/1", {"a": 1})
    _, body = await world.data(who, "GET", "v/1", params={"verify": "true"})
    assert body["data"]["verified"] is True
    _, body = await world.data(who, "GET", "v", params={"cascade": "", "verify": ""})
    assert [e["verified"] for e in body["data"]] == [True]
