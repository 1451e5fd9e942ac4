"""A search's words reach SQLite once each, in one MATCH, and its statement has a budget
of steps; searches hold at most one of the reader workers, so plain lists never queue
behind them (storage/search.py, storage/database.py).

Before: a devices or users search made one full-text subquery per word as written (900
copies of `d` were 900 lookups of the whole installation's index, and 1,000 words a 500:
the expression tree too deep), a list's one MATCH repeated each copy, a one-letter word
gathered every indexed word it starts, no statement had a budget, and searches took both
reader workers: every list of the site waited behind four of them.

Before (second attack): words were Python's word-character runs while the index splits on `_` too:
`a_a_..._a` was one "word" and one quoted phrase of 128 tokens, whose index work made almost
no steps (0.6 s a search over 80,000 rows, never refused); a statement had no bound of
seconds, and one caller could queue any number of searches for the one search worker.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import pytest

from storage import search
from storage import user_scopes as scopes
from storage.database import (
    SCAN_WORKERS,
    SEARCH_WORKERS,
    SEARCHES_PER_CALLER,
    Database,
    SearchBudget,
    SearchesQueued,
)


def test_words_are_kept_once_whatever_their_case() -> None:
    assert search.words("Pump pump PUMP, valve! pump") == ("Pump", "valve")
    assert search.words("!!! ...") == ()


def test_words_are_the_index_tokens_so_no_term_is_a_phrase() -> None:
    assert search.words("a_b-c.d") == ("a", "b", "c", "d")
    assert len(search.tokens("_".join(["a"] * 128))) == 128
    assert search.words("éte, Ørsted да—нет ＡＢ 3_") == ("éte", "Ørsted", "да", "нет", "ＡＢ", "3")
    # a trailing `_` no longer makes a one-letter word a prefix
    assert search.match(search.words("pump 3_")) == '"pump"* "3"'
    # each term is one token of the index: FTS5 splits none of them into a phrase
    conn = apsw.Connection(":memory:")
    tokenize = conn.fts5_tokenizer(*search.TOKENIZER)
    for text in ("a_a_a", "x.y/z", "naïve_café-1"):
        for word in search.words(text):
            assert len(tokenize(word.encode(), apsw.FTS5_TOKENIZE_QUERY, None)) == 1


def test_a_word_shorter_than_the_minimum_prefix_is_matched_whole() -> None:
    assert search.match(("pump", "3")) == '"pump"* "3"'
    assert search.match(('a"b',), ("name",)) == '{name} : ("a""b"*)'


def test_an_account_search_is_one_match_of_each_word_once() -> None:
    found = scopes.search("pump PUMP valve pump", ["name", "tags"], [], "devices")
    assert found.sql.count("MATCH") == 1
    assert found.params == ('{name tags} : ("pump"* "valve"*)',)


def test_with_custom_attributes_each_word_is_looked_for_once() -> None:
    found = scopes.search("pump Pump pump valve", ["name"], ["custom_attributes"], "devices")
    assert found.sql.count("MATCH") == 2
    assert found.sql.count("json_tree") == 2


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database.open(tmp_path / "edge.db", search_budget=SearchBudget(steps=100_000))
    database.write_sync(lambda c: c.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)"))
    database.write_sync(_fill)
    yield database
    database.close()


def _fill(conn: apsw.Connection) -> None:
    conn.execute(
        "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 20000)"
        " INSERT INTO t SELECT k FROM n"
    )


def _count(conn: apsw.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM t a, t b WHERE a.k < 50").fetchone()[0])


async def test_a_search_past_its_steps_stops_and_a_scan_does_not(db: Database) -> None:
    with pytest.raises(search.SearchTooBroad):
        await db.search(_count)
    assert await db.scan(_count) == 49 * 20000
    db.search_budget = SearchBudget(steps=100_000_000)
    assert await db.search(_count) == 49 * 20000
    # the connection keeps no handler: the worker's next statement is not interrupted
    assert await db.scan(_count) == 49 * 20000


def _endless(conn: apsw.Connection) -> int:
    """A statement that never ends by itself."""
    sql = "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n) SELECT max(k) FROM n"
    return int(conn.execute(sql).fetchone()[0])


async def test_a_search_past_its_seconds_stops_whatever_its_steps(db: Database) -> None:
    db.search_budget = SearchBudget(steps=10**15, seconds=0.2)  # steps alone: days
    with pytest.raises(search.SearchTooBroad):
        await db.search(_endless)
    assert await db.scan(_count) == 49 * 20000  # the worker is free, and not interrupted


class Held:
    """Queries that wait on the worker until released, counting how many started."""

    def __init__(self) -> None:
        self.started = 0
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, conn: apsw.Connection) -> int:
        with self._lock:
            self.started += 1
        assert self.release.wait(30)
        return int(conn.execute("SELECT count(*) FROM t").fetchone()[0])


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("never came")


async def test_plain_scans_never_queue_behind_searches(db: Database) -> None:
    assert SEARCH_WORKERS < SCAN_WORKERS
    held = Held()
    searches = [asyncio.ensure_future(db.search(held)) for _ in range(4)]
    await _until(lambda: held.started == SEARCH_WORKERS)
    # every search but one waits off the workers: a plain list is served meanwhile
    assert await db.scan(lambda c: int(c.execute("SELECT count(*) FROM t").fetchone()[0])) == 20000
    assert held.started == SEARCH_WORKERS
    held.release.set()
    assert await asyncio.gather(*searches) == [20000] * 4


async def test_a_search_whose_caller_left_holds_its_worker_until_it_ends(db: Database) -> None:
    held = Held()
    first = asyncio.ensure_future(db.search(held))
    await _until(lambda: held.started == 1)
    first.cancel()
    second = asyncio.ensure_future(db.search(held))
    await asyncio.sleep(0.05)
    assert held.started == 1  # the first query still runs: the second waits for it
    held.release.set()
    assert await second == 20000
    assert held.started == 2


async def test_a_caller_has_at_most_its_share_of_searches_running_or_waiting(
    db: Database,
) -> None:
    held = Held()
    mine = [asyncio.ensure_future(db.search(held, "me")) for _ in range(SEARCHES_PER_CALLER)]
    await _until(lambda: held.started == 1)  # one runs, the others wait for the worker
    with pytest.raises(SearchesQueued):
        await db.search(held, "me")
    others = asyncio.ensure_future(db.search(held, "other"))  # another caller still queues
    unnamed = asyncio.ensure_future(db.search(held))  # a search of no caller is not counted
    mine[0].cancel()  # a caller who leaves keeps its place until its query ends
    with pytest.raises(SearchesQueued):
        await db.search(held, "me")
    held.release.set()
    assert await asyncio.gather(*mine[1:], others, unnamed) == [20000] * (SEARCHES_PER_CALLER + 1)
    assert await db.search(held, "me") == 20000  # its places are free again
