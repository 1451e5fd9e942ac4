"""The filters a walk applies in Python: `path_filter` (a regular expression) and `search`.

One time budget per request covers the time spent in every pattern match it makes
(PATTERN_BUDGET_SECONDS, docs/data.md "Limits"): a pattern that backtracks badly runs out
of it and the request is a 400, never a hang. The budget is the thread's CPU time, not the
wall clock: on a loaded machine the same walk takes longer to happen, not more matching, and
must not turn into a 400. A single match still stops at the wall-clock rest of the budget.
The list engine's `regexp` SQL function (storage/patterns.py) keeps the same kind of budget.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

import regex

from edge.errors import ValidationError
from storage.data_walks import Walked

PATTERN_BUDGET_SECONDS = 0.25
_WORD = re.compile(r"\w+")


class Matcher:
    """Whether a walked row passes the Python-side filters; `texts` are the row's search
    fields, in the order of `fields`."""

    def __init__(
        self,
        path_filter: str | None,
        search: str | None,
        fields: Sequence[str],
        budget: float = PATTERN_BUDGET_SECONDS,
    ) -> None:
        self._pattern = regex.compile(path_filter) if path_filter else None
        self._terms = tuple(_WORD.findall(search.casefold())) if search else ()
        self._searching = search is not None
        self.fields = tuple(fields)
        self._left = budget

    @property
    def active(self) -> bool:
        return self._pattern is not None or self._searching

    def __call__(self, row: Walked) -> bool:
        if self._pattern is not None and not self._path_matches(row.path):
            return False
        return not self._searching or self._found(row)

    def _path_matches(self, path: str) -> bool:
        assert self._pattern is not None
        began = time.thread_time()
        try:
            if self._left <= 0:
                raise TimeoutError
            return self._pattern.search(path, timeout=self._left) is not None
        except TimeoutError:
            raise ValidationError(
                "path_filter", "took too long to match; simplify the pattern"
            ) from None
        finally:
            self._left -= time.thread_time() - began

    def _found(self, row: Walked) -> bool:
        """Every search word starts a word of some searched field (case-insensitive)."""
        if not self._terms:
            return False
        words = [w for text in row.texts if text for w in _WORD.findall(str(text).casefold())]
        return all(any(w.startswith(term) for w in words) for term in self._terms)
