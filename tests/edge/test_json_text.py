"""The one reader of clients' JSON (edge/kernel/json_text.py): a text that cannot break
its rules is not walked, and every text that may is still refused as before."""

from __future__ import annotations

from typing import Any

import pytest

from edge.kernel import json_text
from edge.kernel.errors import ValidationError


def nested(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


def test_a_plain_text_is_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A device's job update is read without a walk of its value in Python (#31)."""
    walked: list[Any] = []
    monkeypatch.setattr(json_text, "check", lambda value, **_: walked.append(value))
    body = b'{"state": "IN_PROGRESS", "expected_version": 1, "progress": 0, "d": ["\\u00e9"]}'
    assert json_text.parse(body)["state"] == "IN_PROGRESS"
    assert json_text.loads(nested(json_text.MAX_DEPTH)) is not None  # 64 deep: allowed
    assert walked == []


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"a": "\\ud800"}', "a: "),
        ('{"a": "\\uDFFF"}', "a: "),  # upper case hex
        ('{"\\uDbFf": 1}', "(key): "),
        ('{"a": ["x", "\\udc00"]}', "a.1: "),
        (nested(json_text.MAX_DEPTH + 1), "body: is nested more than 64 levels deep"),
    ],
)
def test_what_may_break_a_rule_is_still_refused(text: str, where: str) -> None:
    with pytest.raises(ValidationError) as caught:
        json_text.parse(text.encode())
    assert where in caught.value.message


def test_a_raw_surrogate_in_text_is_refused() -> None:
    """Text that did not come from UTF-8 bytes (a query parameter) may hold one itself."""
    with pytest.raises(ValidationError, match="surrogate"):
        json_text.loads('{"a": "\ud800"}')


def test_a_valid_pair_and_the_deepest_allowed_pass() -> None:
    assert json_text.parse(b'{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}
    assert json_text.parse(nested(json_text.MAX_DEPTH).encode()) is not None
