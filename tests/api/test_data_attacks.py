"""The data interface under hostile input, as an outsider sends it: each test is a request
that once answered wrongly (a crash, a hang, a wrong status), and the answer it gets now
(docs/data.md, docs/conventions.md)."""

from __future__ import annotations

import math

import pytest

from edge.data.matchers import Matcher
from edge.kernel.errors import ValidationError
from storage.data_walks import Walked
from storage.patterns import PatternBudget
from tests.data import seed
from tests.world import World


@pytest.mark.parametrize(
    "pattern",
    ["a{1000000000}", "(?:(?:a{100}){100}){100}", "[a-z]{100000,}", "(?x)a{ 5000 }"],
)
async def test_a_path_filter_that_would_spell_out_a_huge_repeat_is_a_400(
    world: World, pattern: str
) -> None:
    """`regex` compiles `a{n}` as n copies of `a`: `a{1000000000}` took every byte of the
    machine's memory before any time budget began. Refused from its text, uncompiled."""
    status, body = await world.data(
        "org_admin", "GET", "", params={"cascade": "", "path_filter": pattern}
    )
    assert status == 400, body
    assert body["message"].startswith("path_filter: repeats too much")


async def test_a_path_filter_with_ordinary_counted_repeats_still_works(world: World) -> None:
    await world.put_data("org_admin", "ids/2026-11-26", 1)
    pattern = r"^/ids/\d{4}-\d{2}-\d{2}$"
    status, body = await world.data(
        "org_admin", "GET", "ids", params={"cascade": "", "path_filter": pattern}
    )
    assert (status, [e["path"] for e in body["data"]]) == (200, ["/ids/2026-11-26"])


async def test_a_bulk_number_filter_past_64_bits_is_not_a_500(world: World) -> None:
    """A JSON integer past 64 bits went to SQLite as it was, which cannot bind it."""
    await world.put_data("org_admin", "n/big", 1, number_1=2**63 - 1)
    for big in (2**64, -(2**70)):
        job = {"paths": ["/n"], "cascade": True, "number_1_lte": big}
        status, body = await world.bulk_data("org_admin", {"method": "GET", "jobs": [job]})
        found = [] if big < 0 else ["/n/big"]
        assert (status, [e["path"] for e in body["data_by_path"]["/n"]]) == (200, found)
    job = {"paths": ["/n"], "cascade": True, "number_1": 10**400}
    status, body = await world.bulk_data("org_admin", {"method": "GET", "jobs": [job]})
    assert (status, body) == (400, {"message": "number_1: must be a finite number"})


async def test_an_integer_filter_matches_an_integer_past_2_to_the_53(world: World) -> None:
    """Read as a float, 9007199254740993 became ...992 and missed the entry it names."""
    exact = 2**53 + 1
    await world.put_data("org_admin", "n/exact", 1, number_1=exact)
    status, body = await world.data(
        "org_admin", "GET", "n", params={"cascade": "", "paths_only": "", "number_1": str(exact)}
    )
    assert (status, body) == (200, {"paths": ["/n/exact"]})


async def test_a_bulk_read_mixing_stored_text_and_an_integer_past_64_bits(world: World) -> None:
    """A point entry goes out as its stored text (an orjson Fragment); an integer past 64
    bits in a cascade sent the whole answer to the fallback encoder, which knows no
    Fragment: a 500."""
    await world.put_data("org_admin", "point", {"small": 1})
    await world.put_data("org_admin", "wide/x", {"big": 2**64})
    jobs = [{"paths": ["/point"]}, {"paths": ["/wide"], "cascade": True}]
    status, body = await world.bulk_data("org_admin", {"method": "GET", "jobs": jobs})
    assert status == 200, body
    assert body["data_by_path"]["/point"]["value"] == {"small": 1}
    assert body["data_by_path"]["/wide"][0]["value"] == {"big": 2**64}


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
async def test_a_line_break_in_a_path_is_refused_like_any_control_character(
    world: World, method: str
) -> None:
    """The route's `{path:.*}` did not match `\\n`: the URL was an unknown route (404)."""
    body = {"value": 1} if method == "PUT" else None
    for escaped in ("a%0Ab", "a%0Db", "a%00b"):
        where = f"/v2/groups/{world.org_group_id}/data/{escaped}"  # sent as written
        status, reply = await world.call("org_admin", method, where, json=body)
        assert (status, reply) == (400, {"message": "path: must not hold control characters"})


@pytest.mark.parametrize("form", [False, True])
async def test_a_body_that_is_not_the_encoding_it_claims_is_a_400(world: World, form: bool) -> None:
    """aiohttp decodes `Content-Encoding` as the body is read and raises what no handler
    expected (RequestPayloadError): a 500, for a JSON body and a form alike."""
    kind = "application/x-www-form-urlencoded" if form else "application/json"
    headers = {"Content-Encoding": "deflate", "Content-Type": kind}
    who, method, where = "org_admin", "PUT", f"/v2/groups/{world.org_group_id}/data/x"
    if form:
        who, method, where = "anonymous", "POST", "/v2/auth/token"
    status, body = await world.call(who, method, where, data=b"not deflate", headers=headers)
    message = "body: could not be read as sent (check its Content-Encoding)"
    assert (status, body) == (400, {"message": message})


async def test_an_index_number_changing_only_its_sign_of_zero_is_written(world: World) -> None:
    """0.0 == -0.0, so a PUT of 0.0 over -0.0 left the column alone while the entry was
    signed with 0.0: the old value came back, and it no longer verified."""
    await world.put_data("org_admin", "zero", 1, number_1=-0.0)
    await world.put_data("org_admin", "zero", 1, number_1=0.0)
    status, body = await world.data("org_admin", "GET", "zero", params={"verify": ""})
    assert status == 200
    assert math.copysign(1.0, body["data"]["number_1"]) == 1.0
    assert body["data"]["verified"] is True


@pytest.mark.parametrize("spelling", ["/secret/", "secret/"])
async def test_a_grant_path_with_a_trailing_slash_names_the_same_path(
    world: World, spelling: str
) -> None:
    """Data paths drop one trailing '/', grant paths kept it: `{"/": read, "/secret/": {}}`
    meant to hide /secret, and hid nothing (no data path ends in '/')."""
    await world.put_data("org_admin", "secret/x", 1)
    await world.put_data("org_admin", "open", 1)
    who = await world.data_holder("peeker", {"/": {"can_read": True}, spelling: {}})
    assert (await world.data(who, "GET", "secret/x"))[0] == 403
    status, body = await world.data(who, "GET", "", params={"cascade": "", "paths_only": ""})
    assert status == 200
    assert "/secret/x" not in body["paths"] and "/open" in body["paths"]


async def test_a_search_of_thousands_of_words_is_bounded(world: World) -> None:
    """Each search word was looked for in every word of every row read, with no budget:
    `t1` 2,700 times cost 4.5 ms a row, 45 s of a reader thread over the scan cap. A
    search is now at most 16 words and 256 characters, as every list's (edge/kernel/
    search.py), and a word written twice is looked for once."""
    await seed(world, [f"/s/t1/{i}" for i in range(50)])
    params = {"cascade": "", "object_count": "", "search": "t1 " * 16}
    status, body = await world.data("org_admin", "GET", "s", params=params)
    assert (status, body) == (200, {"object_count": 50})  # one word, however often
    refusals = {
        " ".join(f"w{i}" for i in range(17)): "search: must hold at most 16 words",
        "t1 " * 2700: "search: must be at most 256 characters",
    }
    for text, message in refusals.items():
        params = {"cascade": "", "search": text}
        status, body = await world.data("org_admin", "GET", "s", params=params)
        assert (status, body) == (400, {"message": message})


def test_search_matching_counts_against_the_request_budget() -> None:
    matcher = Matcher(None, "t1 t2", ("path",), PatternBudget(0.0))
    row = Walked(sort="/a", path="/a", ok=True, texts=("/t1/t2",))
    with pytest.raises(ValidationError, match="search: took too long"):
        matcher(row)


async def test_starts_with_holds_for_text_that_holds_a_nul(world: World) -> None:
    """SQLite's length() and substr() of text stop at the first NUL: `_sw` with one in it
    matched nothing, not even the entry holding exactly that text."""
    await world.put_data("org_admin", "nul/a", 1, unicode_1="a\x00b")
    await world.put_data("org_admin", "nul/b", 1, unicode_1="a")
    for prefix, found in (
        ("a\x00", ["/nul/a"]),
        ("a\x00b", ["/nul/a"]),
        ("a", ["/nul/a", "/nul/b"]),
    ):
        params = {"cascade": "", "paths_only": "", "unicode_1_sw": prefix}
        status, body = await world.data("org_admin", "GET", "nul", params=params)
        assert (status, body) == (200, {"paths": found}), prefix


async def test_a_wide_integer_sent_to_a_text_index_field_is_stored_as_its_spelling(
    world: World,
) -> None:
    """`unicode_*` are coerced to strings (the specification); 2**64 was refused as if it
    were meant for a 64-bit number field."""
    await world.put_data("org_admin", "wide", 1, unicode_1=2**64, unicode_2=-(2**70))
    status, body = await world.data("org_admin", "GET", "wide")
    assert status == 200
    assert (body["data"]["unicode_1"], body["data"]["unicode_2"]) == (str(2**64), str(-(2**70)))
    status, body = await world.data(
        "org_admin", "PUT", "wide", json={"value": 1, "unicode_1": 10**1100}
    )
    assert (status, body) == (400, {"message": "unicode_1: must be at most 1024 characters"})
