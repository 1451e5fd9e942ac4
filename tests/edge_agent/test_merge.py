"""JSON merge patches both ways (edge_agent/merge.py): `between` finds the patch that turns
one section into another, so that applying it gives the other exactly."""

from __future__ import annotations

from typing import Any

import pytest

from edge_agent import merge

CASES = [
    ({}, {}),
    ({"a": 1}, {"a": 1}),
    ({"a": 1}, {"a": 2}),
    ({"a": 1, "b": 2}, {"b": 2}),
    ({"a": {"x": 1, "y": 2}}, {"a": {"x": 1}}),
    ({"a": {"x": 1}}, {"a": 5}),
    ({"a": 5}, {"a": {"x": {"y": 1}}}),
    ({"a": 1}, {"a": 1.0}),
    ({"a": 1}, {"a": True}),
    ({"a": [1, 2]}, {"a": [2]}),
]


@pytest.mark.parametrize(("old", "new"), CASES)
def test_the_patch_between_two_sections_turns_one_into_the_other(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    patch = merge.between(old, new)
    result = merge.apply(old, patch)
    assert result == new and [type(v) for v in result.values()] == [type(v) for v in new.values()]
    assert (patch == {}) == (old == new and merge.between(new, old) == {})


def test_the_patch_is_the_smallest_and_drops_keys_with_null() -> None:
    old = {"keep": 1, "gone": 2, "led": {"color": "blue", "level": 3}}
    new = {"keep": 1, "led": {"color": "red", "level": 3}}
    assert merge.between(old, new) == {"gone": None, "led": {"color": "red"}}


def test_apply_follows_rfc_7396() -> None:
    target = {"a": "b", "c": {"d": "e", "f": "g"}}
    assert merge.apply(target, {"a": "z", "c": {"f": None}}) == {"a": "z", "c": {"d": "e"}}
    assert merge.apply({}, {"n": {"x": None, "y": 1}}) == {"n": {"y": 1}}
    assert target == {"a": "b", "c": {"d": "e", "f": "g"}}  # not changed
