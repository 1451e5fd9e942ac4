"""Full-text search as SQLite runs it: the words of a search as one FTS5 MATCH, and the
work one search may make SQLite do.

A search's cost grows with its words: each is looked up in the whole installation's index
(a prefix term gathers every indexed word it starts), before the caller's scope narrows
anything. Words are the index's own tokens: `words` splits a search with the tokenizer
the indexes are built with (unicode61: letters and digits are a word, `_`, spaces and
punctuation separate words), so every word is one term of one token. A run that held
several tokens (`a_a_a`) would be one quoted phrase, whose index work FTS5 does almost
without virtual-machine steps. A word is looked up once however often it is written, a
word shorter than MIN_PREFIX matches itself only (a one-letter prefix gathers a twentieth
of the index), and the statement runs under a budget of SQLite virtual-machine steps and
a bound of seconds (`bounded`): past either the search stops with SearchTooBroad, which
the list engine answers with a 400 asking for a narrower search. Steps refuse the same
search on a fast machine and a loaded one alike; the seconds bound what steps do not see.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import apsw

T = TypeVar("T")
MIN_PREFIX = 2
# How often (in virtual-machine steps) SQLite asks whether a search may go on.
STEP_CHECK = 1000
# The tokenizer of every full-text index (storage/migrations: `tokenize = '...'`).
TOKENIZER = ("unicode61", ["remove_diacritics", "2"])
_local = threading.local()


class SearchTooBroad(Exception):
    """A search used up its budget of SQLite steps or its seconds."""


def _tokenizer() -> apsw.FTS5Tokenizer:
    """This thread's unicode61 tokenizer (on a private in-memory connection: a tokenizer
    belongs to a connection, and connections are not shared between threads here)."""
    found: apsw.FTS5Tokenizer | None = getattr(_local, "tokenizer", None)
    if found is None:
        conn = apsw.Connection(":memory:")
        found = conn.fts5_tokenizer(TOKENIZER[0], TOKENIZER[1])
        _local.conn, _local.tokenizer = conn, found
    return found


def tokens(text: str) -> list[str]:
    """The tokens of `text` as the full-text indexes split it, each as written in `text`
    (counted as sent: `a a` is two)."""
    raw = text.encode("utf-8", "surrogatepass")
    found = _tokenizer()(raw, apsw.FTS5_TOKENIZE_QUERY, None, include_colocated=False)
    return [raw[int(each[0]) : int(each[1])].decode("utf-8", "replace") for each in found]


def words(text: str) -> tuple[str, ...]:
    """The words of `text` (its tokens: runs of letters and digits), each once whatever
    its case (as first written: custom attributes are matched with SQLite's ASCII-only
    lower())."""
    kept: dict[str, str] = {}
    for word in tokens(text):
        kept.setdefault(word.casefold(), word)
    return tuple(kept.values())


def term(word: str) -> str:
    """One word as an FTS5 term: a prefix of an indexed word, or (shorter than
    MIN_PREFIX) that word itself."""
    quoted = '"' + word.replace('"', '""') + '"'
    return quoted + "*" if len(word) >= MIN_PREFIX else quoted


def match(found: Sequence[str], columns: Sequence[str] = ()) -> str:
    """An FTS5 MATCH expression requiring every word, in `columns` if any are named."""
    expression = " ".join(term(w) for w in found)
    return "{" + " ".join(columns) + "} : (" + expression + ")" if columns else expression


def bounded(
    steps: int, seconds: float, query: Callable[[apsw.Connection], T]
) -> Callable[[apsw.Connection], T]:
    """`query`, stopped with SearchTooBroad once it has made SQLite run `steps`
    virtual-machine steps (counted in STEP_CHECK blocks) or has run `seconds` (wall
    clock: what the search worker is held for), whichever comes first."""

    def run(conn: apsw.Connection) -> T:
        checks = 0
        deadline = time.monotonic() + seconds

        def progress() -> bool:  # True interrupts the statement
            nonlocal checks
            checks += 1
            return checks * STEP_CHECK > steps or time.monotonic() > deadline

        conn.set_progress_handler(progress, STEP_CHECK)
        try:
            return query(conn)
        except apsw.InterruptError:
            raise SearchTooBroad(f"more than {steps} steps or {seconds} s") from None
        finally:
            conn.set_progress_handler(None)

    return run
