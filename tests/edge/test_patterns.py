"""The spelled-out size of client regular expressions (edge/kernel/patterns.py): an estimate
from the text that is never below what `regex` spells out to compile them."""

from __future__ import annotations

import pytest

from edge.kernel.errors import ValidationError
from edge.kernel.patterns import MAX_SPELLED_OUT, checked, spelled_out


@pytest.mark.parametrize(
    ("pattern", "at_least"),
    [
        ("a{1000000000}", 10**9),
        ("(?:(?:a{100}){100}){100}", 10**6),
        ("a{999999,1000000}", 999_999),
        ("(?x)a{ 100000 }", 100_000),
        ("[[]a{1000000}", 10**6),  # a '[' inside a set does not open another
        (r"[\]]{3000}", 3000),
        (r"\p{L}{2000}", 2000),
        ("(a(b){3}){4}", 16),
    ],
)
def test_the_estimate_covers_what_regex_spells_out(pattern: str, at_least: int) -> None:
    assert spelled_out(pattern) >= at_least


@pytest.mark.parametrize(
    "pattern",
    [
        r"^/ids/\d{4}-\d{2}-\d{2}$",
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "a{1,1000000}",  # only the minimum is spelled out
        "a{,1000000}",
        r"\{100000}",  # an escaped brace repeats nothing
        "x" * 256,
    ],
)
def test_ordinary_patterns_pass(pattern: str) -> None:
    assert spelled_out(pattern) <= MAX_SPELLED_OUT
    assert checked("f", pattern, 256) == pattern


def test_a_refused_pattern_names_its_field() -> None:
    with pytest.raises(ValidationError, match="repeats too much"):
        checked("name_regex", "(?:a{64}){64}", 256)
    with pytest.raises(ValidationError, match="at most 8 characters"):
        checked("name_regex", "a" * 9, 8)
    with pytest.raises(ValidationError, match="not a valid regular expression"):
        checked("name_regex", "(", 8)
