"""File values alone: paths, index fields, content types, part lists, S3 ETags."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from edge.files import etags, values
from edge.kernel.errors import ValidationError


@pytest.mark.parametrize(
    ("raw", "path"),
    [("a/b.txt", "/a/b.txt"), ("//a//b/", "/a/b"), (" /x ", "/ /x "), ("", "/"), ("ü/é", "/ü/é")],
)
def test_paths_are_normalized(raw: str, path: str) -> None:
    assert values.file_path(raw) == path


@pytest.mark.parametrize("raw", ["a\x00b", "a\nb", "x" * 1025])
def test_bad_paths_are_refused(raw: str) -> None:
    with pytest.raises(ValidationError):
        values.file_path(raw)


def test_index_fields_are_coerced_like_data() -> None:
    body = {"unicode_1": True, "unicode_2": 7, "unicode_3": 1.5, "unicode_4": None, "number_1": 3}
    assert values.index_fields(body) == {
        "unicode_1": "true",
        "unicode_2": "7",
        "unicode_3": "1.5",
        "unicode_4": None,
        "number_1": 3.0,
    }


@pytest.mark.parametrize("value", [True, "3", float("nan"), float("inf")])
def test_numbers_must_be_finite_numbers(value: Any) -> None:
    with pytest.raises(ValidationError, match="number_1"):
        values.index_fields({"number_1": value})


@pytest.mark.parametrize(
    "value", ["text/plain", "application/vnd.a+json", "text/html; charset=utf-8"]
)
def test_media_types(value: str) -> None:
    assert values.content_type(value) == value


def test_etag_by_part_is_ordered_and_unquoted() -> None:
    tag = hashlib.md5(b"x").hexdigest()
    parsed = values.etag_by_part({"2": f'"{tag}"', "1": tag.upper()}, 3)
    assert list(parsed.items()) == [(1, tag), (2, tag)]


def test_s3_etags() -> None:
    parts = [b"a" * 10, b"b"]
    digests = [hashlib.md5(p).digest() for p in parts]
    assert etags.of_part(digests[0]) == hashlib.md5(parts[0]).hexdigest()
    joined = hashlib.md5(digests[0] + digests[1]).hexdigest()
    assert etags.of_multipart(digests) == f"{joined}-2"
    assert etags.unquoted('W/"ABC"') == "abc" and etags.quoted("abc") == '"abc"'
