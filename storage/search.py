"""Full-text search as SQLite runs it: the words of a search as one FTS5 MATCH, and the
work one search may make SQLite do.

A search's cost grows with its words: each is looked up in the whole installation's index
(a prefix term gathers every indexed word it starts), before the caller's scope narrows
anything. So a word is looked up once however often it is written (`words` keeps each
once), a word shorter than MIN_PREFIX matches itself only (a one-letter prefix gathers a
twentieth of the index), and the statement runs under a budget of SQLite virtual-machine
steps (`within_steps`): past it the search stops with SearchTooBroad, which the list
engine answers with a 400 asking for a narrower search. Steps, not seconds: the same
search is refused on a fast machine and a loaded one alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

import apsw

T = TypeVar("T")
MIN_PREFIX = 2
# How often (in virtual-machine steps) SQLite asks whether a search may go on.
STEP_CHECK = 1000
_WORD = re.compile(r"\w+")


class SearchTooBroad(Exception):
    """A search used up its budget of SQLite steps."""


def words(text: str) -> tuple[str, ...]:
    """The words of `text` (runs of letters, digits and `_`), each once whatever its case
    (as first written: custom attributes are matched with SQLite's ASCII-only lower())."""
    kept: dict[str, str] = {}
    for word in _WORD.findall(text):
        kept.setdefault(word.casefold(), word)
    return tuple(kept.values())


def term(word: str) -> str:
    """One word as an FTS5 phrase: a prefix of an indexed word, or (shorter than
    MIN_PREFIX) that word itself."""
    quoted = '"' + word.replace('"', '""') + '"'
    return quoted + "*" if len(word) >= MIN_PREFIX else quoted


def match(found: Sequence[str], columns: Sequence[str] = ()) -> str:
    """An FTS5 MATCH expression requiring every word, in `columns` if any are named."""
    expression = " ".join(term(w) for w in found)
    return "{" + " ".join(columns) + "} : (" + expression + ")" if columns else expression


def within_steps(
    steps: int, query: Callable[[apsw.Connection], T]
) -> Callable[[apsw.Connection], T]:
    """`query`, stopped with SearchTooBroad once it has made SQLite run `steps`
    virtual-machine steps (counted in STEP_CHECK blocks)."""

    def run(conn: apsw.Connection) -> T:
        checks = 0

        def progress() -> bool:  # True interrupts the statement
            nonlocal checks
            checks += 1
            return checks * STEP_CHECK > steps

        conn.set_progress_handler(progress, STEP_CHECK)
        try:
            return query(conn)
        except apsw.InterruptError:
            raise SearchTooBroad(f"more than {steps} steps") from None
        finally:
            conn.set_progress_handler(None)

    return run
