"""The filters a walk applies in Python: `path_filter` (a regular expression) and `search`.

One time budget per request covers the time spent in every pattern match and every
search it makes (a `PatternBudget`, 250 ms, docs/data.md "Limits"), shared by every job of
a bulk GET (each job has a Matcher of its own, all charging the request's one budget: 100
jobs of `(a|a)+$` each with a budget of their own ran 4-16 s): a pattern that backtracks
badly, or a search of thousands of words (`t1 t1 t1 ...`, each looked for in every word of
every row read: 45 s of a reader thread over the scan cap), runs out of it and the request
is a 400, never a hang. A search's words (at most 16: edge/kernel/search.py) are kept
once each.
The budget is the thread's CPU time, not the wall clock: on a loaded machine the same
walk takes longer to happen, not more matching, and must not turn into a 400. A single
match still stops at the wall-clock rest of the budget.
The list engine's `regexp` SQL function (storage/patterns.py) keeps the same kind of budget.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

import regex

from edge.kernel.errors import ValidationError
from storage.data_walks import Walked
from storage.patterns import PatternBudget

_WORD = re.compile(r"\w+")
_clock = time.thread_time  # CPU time of the matching thread (a module name: tests step it)


class Matcher:
    """Whether a walked row passes the Python-side filters; `texts` are the row's search
    fields, in the order of `fields`."""

    def __init__(
        self,
        path_filter: str | None,
        search: str | None,
        fields: Sequence[str],
        budget: PatternBudget | None = None,
    ) -> None:
        self._pattern = regex.compile(path_filter) if path_filter else None
        self._terms = tuple(dict.fromkeys(_WORD.findall(search.casefold()))) if search else ()
        self._searching = search is not None
        self.fields = tuple(fields)
        self.budget = budget if budget is not None else PatternBudget()

    @property
    def active(self) -> bool:
        return self._pattern is not None or self._searching

    def __call__(self, row: Walked) -> bool:
        if self._pattern is not None and not self._path_matches(row.path):
            return False
        return not self._searching or self._found(row)

    def _path_matches(self, path: str) -> bool:
        assert self._pattern is not None
        began = _clock()
        try:
            if self.budget.left <= 0:
                raise TimeoutError
            return self._pattern.search(path, timeout=self.budget.left) is not None
        except TimeoutError:
            raise ValidationError(
                "path_filter", "took too long to match; simplify the pattern"
            ) from None
        finally:
            self.budget.spend(_clock() - began)

    def _found(self, row: Walked) -> bool:
        """Every search word starts a word of some searched field (case-insensitive)."""
        if not self._terms:
            return False
        if self.budget.left <= 0:
            raise ValidationError("search", "took too long to match; use fewer words")
        began = _clock()
        try:
            texts = (str(text).casefold() for text in row.texts if text)
            words = [w for text in texts for w in _WORD.findall(text)]
            return all(any(w.startswith(term) for w in words) for term in self._terms)
        finally:
            self.budget.spend(_clock() - began)
