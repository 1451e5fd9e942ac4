"""Property tests that run twice: a few examples in `make test`, many in `make test-long`.

`everyday_and_long(60, 1500, value=JSON)(body)` gives two tests of one body: the first with
60 examples, the second marked `long` with 1,500, so the thorough run costs no second copy
of the test. Bind both to names starting with `test_` in the test module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.strategies import SearchStrategy

Test = Callable[..., None]
LONG_TIMEOUT = 1200  # seconds one long property run may take (pytest-timeout)


def everyday_and_long(
    everyday: int, long: int, **strategies: SearchStrategy[Any]
) -> Callable[[Test], tuple[Test, Test]]:
    def make(body: Test) -> tuple[Test, Test]:
        return _run(body, everyday, strategies), _long(_run(body, long, strategies))

    return make


def _run(body: Test, examples: int, strategies: dict[str, SearchStrategy[Any]]) -> Test:
    chosen = settings(
        max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    return chosen(given(**strategies)(body))


def _long(test: Test) -> Test:
    return pytest.mark.long(pytest.mark.timeout(LONG_TIMEOUT)(test))
