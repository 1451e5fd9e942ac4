"""The data room's pure rules: path spelling, the JSON value limits, and how a walk's
rows become a page (the scan cap and where the next page resumes)."""

from __future__ import annotations

from typing import Any

import pytest

from edge.data import paths
from edge.data.json_rules import MAX_DEPTH, checked_text
from edge.data.pages import collect
from edge.kernel.errors import ValidationError
from storage.data_walks import Walked


@pytest.mark.parametrize(
    ("raw", "path"), [("a", "/a"), ("/a/b/", "/a/b"), ("", "/"), ("/", "/"), ("é x/ü", "/é x/ü")]
)
def test_paths_have_one_spelling(raw: str, path: str) -> None:
    assert paths.normalize(raw) == path


@pytest.mark.parametrize("raw", ["a//b", "a/./b", "../a", "a\x00", "a\x85", "a\ud800", "a//"])
def test_invalid_paths(raw: str) -> None:
    with pytest.raises(ValidationError):
        paths.normalize(raw)


def deep(n: int) -> Any:
    value: Any = "leaf"
    for _ in range(n):
        value = {"k": value}
    return value


def test_a_million_levels_is_a_400_not_a_crash() -> None:
    with pytest.raises(ValidationError, match="nested deeper than"):
        checked_text("value", deep(1_000_000), 10**9)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "NaN and Infinity"),
        ([1, float("-inf")], "NaN and Infinity"),
        ({"a": "\udc00"}, "lone surrogate"),
        ("x" * 100, "is 102 bytes as JSON; at most 100"),
        (deep(MAX_DEPTH + 1), "nested deeper than 64"),
    ],
)
def test_value_rules(value: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        checked_text("value", value, 100)


def test_the_stored_text_is_compact_and_keeps_key_order() -> None:
    assert checked_text("value", {"b": 1, "a": ["é", 2.5]}, 100) == '{"b":1,"a":["é",2.5]}'


def rows(*spec: tuple[str, bool]) -> list[Walked]:
    return [Walked(path, path, ok) for path, ok in spec]


def test_a_full_page_resumes_after_its_last_match() -> None:
    got = collect(rows(("/a", True), ("/b", False), ("/c", True)), 1, 100, lambda r: True)
    assert [r.path for r in got.rows] == ["/a"] and got.resume == ("/b", "/b")


def test_the_scan_cap_resumes_after_the_last_row_read() -> None:
    got = collect(rows(("/a", False), ("/b", False), ("/c", True)), 10, 2, lambda r: True)
    assert got.rows == [] and got.resume == ("/b", "/b")


def test_the_end_of_the_data_leaves_no_key() -> None:
    got = collect(rows(("/a", True), ("/b", True)), 2, 2, lambda r: True)
    assert len(got.rows) == 2 and got.resume is None


def test_counting_keeps_no_rows() -> None:
    got = collect(rows(("/a", True), ("/b", True), ("/c", False)), None, 100, lambda r: True)
    assert (got.count, got.rows, got.resume) == (2, [], None)
