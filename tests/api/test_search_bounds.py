"""`search` is bounded for every list: at most 16 words and 256 characters (a 400 naming
it, declared in the OpenAPI document), a one-letter word matches itself, and a search that
would make SQLite work past `search_max_steps` is a 400 asking for a narrower one
(docs/conventions.md "search"; storage/search.py).

Before: a search took any number of words, each looked up in the whole installation's
index: a caller who sees nothing made one request cost seconds (900 copies of `d`: 8 s
over 80,000 devices' index rows), four of them held the reader workers 30 s for every
list of the site, and 1,000 words were a 500 (the expression tree too deep).
"""

from __future__ import annotations

import random
import re
import string
from typing import Any

import apsw
import pytest

from edge.kernel import search
from tests.world import World

LISTS = ("/v2/devices", "/v2/users", "/v2/groups", "/v2/projects", "/v2/roles")
BROAD = "search: is too broad: it would read too much of the index; add words or use longer ones"


def distinct(count: int) -> str:
    return " ".join(f"w{i}" for i in range(count))


@pytest.mark.parametrize("path", LISTS)
async def test_more_than_16_words_or_256_characters_is_a_400_naming_search(
    world: World, path: str
) -> None:
    status, _ = await world.call("org_admin", "GET", path, params={"search": distinct(16)})
    assert status == 200
    refusals = {
        distinct(17): "search: must hold at most 16 words",
        "a " * 128: "search: must hold at most 16 words",  # 256 characters, 128 words
        "d " * 1000: "search: must be at most 256 characters",  # was a 500 on devices
        "x" * 257: "search: must be at most 256 characters",
    }
    for text, message in refusals.items():
        status, body = await world.call("org_admin", "GET", path, params={"search": text})
        assert (status, body) == (400, {"message": message}), text[:20]


async def test_a_one_letter_word_matches_itself_not_every_word_it_starts(world: World) -> None:
    made = {}
    for name in ("Pump 3", "Pump 30", "Pump B"):
        status, reply = await world.call("org_admin", "POST", "/v2/devices", json={"name": name})
        assert status == 201, reply
        made[reply["device"]["id"]] = name
    status, body = await world.call("org_admin", "GET", "/v2/devices", params={"search": "pump 3"})
    assert status == 200
    assert [made.get(d["id"]) for d in body["devices"]] == ["Pump 3"]
    status, body = await world.call("org_admin", "GET", "/v2/devices", params={"search": "pump 30"})
    assert [made.get(d["id"]) for d in body["devices"]] == ["Pump 30"]  # two letters: a prefix


def _index(conn: apsw.Connection, rows: int) -> None:
    """`rows` rows of the devices' and groups' indexes holding `pump` (what as many
    devices and groups of other organizations put there)."""
    rnd = random.Random(1)
    for i in range(rows):
        name = "pump " + "".join(rnd.choices(string.ascii_lowercase, k=6))
        conn.execute("INSERT INTO devices_fts(id, name) VALUES (?, ?)", (f"fake{i}", name))
        conn.execute(
            "INSERT INTO groups_fts(rowid, id, name) VALUES (?, ?, ?)",
            (10_000_000 + i, f"fake{i}", name),
        )


@pytest.mark.world(search_max_steps=100_000)
@pytest.mark.parametrize("path", ["/v2/devices", "/v2/groups"])
async def test_a_search_past_its_steps_is_a_400_and_lists_go_on(world: World, path: str) -> None:
    world.site.services.db.write_sync(lambda c: _index(c, 40_000))
    status, body = await world.call("org_admin", "GET", path, params={"search": "pump"})
    assert (status, body) == (400, {"message": BROAD})
    status, body = await world.call("org_admin", "GET", path, params={"search": "pumpkin"})
    assert status == 200  # a narrow search is served
    status, body = await world.call("org_admin", "GET", path, params={"limit": "1"})
    assert status == 200 and body[path.rsplit("/", 1)[1]]


def _search_parameter(document: dict[str, Any], path: str) -> dict[str, Any]:
    parameters = document["paths"][path]["get"]["parameters"]
    return next(p["schema"] for p in parameters if p["name"] == "search")


@pytest.mark.parametrize("path", LISTS)
async def test_the_document_states_the_bounds(world: World, path: str) -> None:
    status, document = await world.call("org_admin", "GET", "/v2/openapi.json")
    assert status == 200
    schema = _search_parameter(document, path)
    assert schema["maxLength"] == search.MAX_CHARS == 256
    pattern = re.compile(schema["pattern"])
    assert pattern.search(distinct(16)) and pattern.search(" " + distinct(16) + " !")
    assert pattern.search("") and pattern.search("éte, Ørsted") and pattern.search("!!!")
    assert not pattern.search(distinct(17)) and not pattern.search("a " * 17)
