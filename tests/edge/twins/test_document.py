"""The twin document's rules (edge/twins/document.py): RFC 7396's own examples for the
merge patch, the metadata times, the delta, and the limits naming their rule."""

from __future__ import annotations

from typing import Any

import pytest

from edge.kernel.errors import ValidationError
from edge.twins import document
from edge.twins.document import Limits

# RFC 7396, Appendix A: (original, patch, result)
RFC_EXAMPLES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("original", "patch", "result"), RFC_EXAMPLES)
def test_merge_is_rfc_7396(original: Any, patch: Any, result: Any) -> None:
    assert document.merge(original, patch) == result


def test_merge_leaves_its_inputs_alone() -> None:
    original = {"a": {"b": 1}}
    document.merge(original, {"a": {"b": 2, "c": 3}})
    assert original == {"a": {"b": 1}}


def test_stamped_times_every_leaf_and_keeps_removals() -> None:
    patch = {"a": 1, "b": {"c": [1, 2], "d": None}, "e": None}
    assert document.stamped(patch, "T") == {"a": "T", "b": {"c": "T", "d": None}, "e": None}


@pytest.mark.parametrize(
    ("desired", "reported", "delta"),
    [
        ({}, {"a": 1}, {}),
        ({"a": 1}, {}, {"a": 1}),
        ({"a": 1}, {"a": 1}, {}),
        ({"a": 1}, {"a": 2}, {"a": 1}),
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": 1}}, {"a": {"c": 2}}),
        ({"a": {"b": 1}}, {"a": 5}, {"a": {"b": 1}}),
        ({"a": [1, 2]}, {"a": [2, 1]}, {"a": [1, 2]}),
        ({"a": None}, {}, {"a": None}),
        ({"a": {}}, {"a": {"x": 1}}, {}),
    ],
)
def test_delta_is_what_desired_holds_that_reported_does_not(
    desired: dict[str, Any], reported: dict[str, Any], delta: dict[str, Any]
) -> None:
    assert document.delta(desired, reported) == delta


LIMITS = Limits(max_bytes=64, max_depth=3, max_key_chars=4)


@pytest.mark.parametrize(
    ("patch", "words"),
    [
        ([1], "desired: must be an object (or null to clear it)"),
        ("x", "desired: must be an object (or null to clear it)"),
        ({"a": {"b": {"c": {}}}}, "desired.a.b.c: nested deeper than the limit of 3 levels"),
        ({"a": [[[1]]]}, "desired.a: nested deeper than the limit of 3 levels"),
        ({"abcde": 1}, "desired: keys must be 1 to 4 characters long"),
        ({"a": {"": 1}}, "desired.a: keys must be 1 to 4 characters long"),
        ({"\x00": 1}, f"desired: {document.CONTROL_RULE}"),
        ({"a": [{"b\x1f": 1}]}, f"desired.a: {document.CONTROL_RULE}"),
        ({"\x7f": {"b": 1}}, f"desired: {document.CONTROL_RULE}"),
    ],
)
def test_a_patch_past_a_limit_names_it(patch: Any, words: str) -> None:
    with pytest.raises(ValidationError) as refused:
        document.check_patch("desired", patch, LIMITS)
    assert refused.value.message == words


@pytest.mark.parametrize(
    "patch", [None, {}, {"abcd": {"b": [1]}}, {" \x80\u2028": 1}, {"a": {"\x00": None}}]
)
def test_a_patch_within_the_limits_passes(patch: Any) -> None:
    assert document.check_patch("desired", patch, LIMITS) is None  # no refusal raised


def test_the_size_counts_both_sections_as_compact_utf8() -> None:
    assert document.size({}, {}) == len(b'{"desired":{},"reported":{}}')
    assert document.size({"a": "\u00e9"}, {}) == len('{"desired":{"a":"e"},"reported":{}}') + 1
    document.check_size({"a": "x" * 30}, {}, LIMITS)
    with pytest.raises(ValidationError) as refused:
        document.check_size({"a": "x" * 20}, {"b": "y" * 20}, LIMITS)
    assert "over the limit of 64" in refused.value.message
