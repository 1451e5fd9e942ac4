"""`search` is bounded for every list: at most 16 words and 256 characters (a 400 naming
it, declared in the OpenAPI document), a one-letter word matches itself, and a search that
would make SQLite work past `search_max_steps` is a 400 asking for a narrower one
(docs/conventions.md "search"; storage/search.py).

Before: a search took any number of words, each looked up in the whole installation's
index: a caller who sees nothing made one request cost seconds (900 copies of `d`: 8 s
over 80,000 devices' index rows), four of them held the reader workers 30 s for every
list of the site, and 1,000 words were a 500 (the expression tree too deep).

Before (second attack): a word was a run of Python's word characters, while the index splits
on `_` too: `a_a_..._a` (255 characters, 128 tokens) passed as one word, became one phrase
of 128 tokens whose index work the step budget barely counted (0.6 s a search over 80,000
rows, ten of them made another organization's search wait 7.5 s), and `3_` was the prefix
`3*`. The document's `pattern` counted ASCII `\\w` (JSON Schema regular expressions are
ECMA-262): 17 Cyrillic words passed it and were a 400. One caller could queue any number of
searches for the one search worker.
"""

from __future__ import annotations

import asyncio
import random
import string
import threading
from typing import Any

import apsw
import pytest

from edge.kernel import search
from storage.database import SEARCHES_PER_CALLER
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
        "_".join(["a"] * 128): "search: must hold at most 16 words",  # one phrase before
        "_".join(f"w{i}" for i in range(17)): "search: must hold at most 16 words",
        " ".join(["да"] * 17): "search: must hold at most 16 words",
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
    for text in ("pump 3_", "pump_3", "pump 3."):  # `_` separates words, as the index does
        status, body = await world.call("org_admin", "GET", "/v2/devices", params={"search": text})
        assert (status, [made.get(d["id"]) for d in body["devices"]]) == (200, ["Pump 3"]), text


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
async def test_the_document_states_the_bounds_and_no_pattern_the_server_disagrees_with(
    world: World, path: str
) -> None:
    status, document = await world.call("org_admin", "GET", "/v2/openapi.json")
    assert status == 200
    schema = _search_parameter(document, path)
    assert schema["maxLength"] == search.MAX_CHARS == 256
    assert "at most 16 words" in schema["description"] and "`_`" in schema["description"]
    # an ECMA-262 pattern would pass 17 Cyrillic words (its `\w` is ASCII) the server refuses
    assert "pattern" not in schema
    status, _ = await world.call("org_admin", "GET", path, params={"search": "да " * 16})
    assert status == 200


class Held:
    """A query that holds the search worker until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()

    def __call__(self, _: apsw.Connection) -> int:
        self.started.set()
        assert self.release.wait(30)
        return 0


async def test_a_caller_past_its_searches_running_or_waiting_gets_a_429(world: World) -> None:
    assert world.api is not None
    db, held = world.site.services.db, Held()
    mine = [
        asyncio.ensure_future(db.search(held, world.id("org_admin")))
        for _ in range(SEARCHES_PER_CALLER)
    ]
    await asyncio.get_running_loop().run_in_executor(None, held.started.wait, 30)
    headers = {"Authorization": f"Bearer {await world.token('org_admin')}"}
    response = await world.api.client.get("/v2/devices", params={"search": "pump"}, headers=headers)
    assert response.status == 429 and response.headers["Retry-After"] == "1"
    assert await response.json() == {
        "message": "You have 2 searches running or waiting; retry when one ends"
    }
    status, _ = await world.call("org_admin", "GET", "/v2/devices")  # a plain list is served
    assert status == 200
    other = asyncio.ensure_future(  # another caller's search waits its turn, not refused
        world.call("other_admin", "GET", "/v2/devices", params={"search": "pump"})
    )
    held.release.set()
    assert await asyncio.gather(*mine) == [0] * SEARCHES_PER_CALLER
    assert (await other)[0] == 200
    status, _ = await world.call("org_admin", "GET", "/v2/devices", params={"search": "pump"})
    assert status == 200
