"""What valid file requests hold: paths, index fields, content types, expiry, part lists.

Each rule returns the normalized value or raises ValidationError naming the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from edge.access.paths import CONTROL
from edge.files import etags
from edge.kernel import numbers, patterns
from edge.kernel.errors import ValidationError

MAX_PATH = 1024
MAX_INDEX_TEXT = 1024
MAX_PATTERN = 256
DEFAULT_EXPIRES_IN = 3600
MAX_EXPIRES_IN = 7 * 24 * 3600  # a week, as S3's presigned URLs
UNICODE_FIELDS = tuple(f"unicode_{n}" for n in range(1, 7))
NUMBER_FIELDS = ("number_1", "number_2")
INDEX_FIELDS = (*UNICODE_FIELDS, *NUMBER_FIELDS)
SERVER_OWNED = ("size", "etag", "uploaded_date")
# A media type as HTTP writes it (RFC 9110 tokens), optional parameters; no control
# characters, since it is sent back in a Content-Type header.
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_CONTENT_TYPE = re.compile(rf"^{_TOKEN}/{_TOKEN}(\s*;\s*[ -~]*)?$")
CONTENT_TYPE_PATTERN = _CONTENT_TYPE.pattern  # for the OpenAPI document
# ASCII digits only: str.isdigit and int() also take other scripts' digits ('\u0663' is 3).
_PART_NUMBER = re.compile("[0-9]+")


def file_path(raw: str) -> str:
    """A path with its leading '/', repeated and trailing slashes removed. Control
    characters are refused wherever they are; so are '.' and '..' segments, which a URL
    resolves before the server sees it: a file there could never be fetched through its
    presigned URL. Spaces are kept where they are, at the ends too (as data paths and S3
    keys keep them): `report.pdf ` was silently stored as `report.pdf`, overwriting it."""
    if CONTROL.search(raw):  # C0, DEL and C1, as data and grant paths refuse them
        raise ValidationError("path", "must not contain control characters")
    segments = [part for part in raw.split("/") if part]
    if any(part in (".", "..") for part in segments):
        raise ValidationError("path", "'.' and '..' are not path segments")
    path = "/" + "/".join(segments)
    if len(path) > MAX_PATH:
        raise ValidationError("path", f"must be at most {MAX_PATH} characters")
    return path


def file_name(path: str) -> str:
    """The last segment: what a file is called. The root names no file."""
    name = path.rsplit("/", 1)[-1]
    if not name:
        raise ValidationError("path", "must name a file, not the root")
    return name


def index_fields(body: Mapping[str, Any]) -> dict[str, Any]:
    """The index fields a body gives: text (numbers and booleans are written as text, as
    for data) and numbers; null clears one."""
    out: dict[str, Any] = {}
    for name in UNICODE_FIELDS:
        if name in body:
            out[name] = _text(name, body[name])
    for name in NUMBER_FIELDS:
        if name in body:
            value = body[name]  # null clears it
            out[name] = None if value is None else numbers.index_value(name, value)
    return out


def _text(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        value = json.dumps(value)
    elif isinstance(value, int | float):
        value = str(value)
    if not isinstance(value, str):
        raise ValidationError(name, "must be a string")
    if len(value) > MAX_INDEX_TEXT:
        raise ValidationError(name, f"must be at most {MAX_INDEX_TEXT} characters")
    return value


def content_type(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _CONTENT_TYPE.match(value.strip()):
        raise ValidationError("content_type", "must be a media type such as text/plain")
    if len(value) > 255:
        raise ValidationError("content_type", "must be at most 255 characters")
    return value.strip()


def expires_in(value: Any) -> int:
    if value is None:
        return DEFAULT_EXPIRES_IN
    if isinstance(value, float) and value.is_integer():  # JSON does not tell 5.0 from 5
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("expires_in", "must be a whole number of seconds")
    if not 1 <= value <= MAX_EXPIRES_IN:
        raise ValidationError("expires_in", f"must be between 1 and {MAX_EXPIRES_IN} seconds")
    return value


def part_count(field: str, value: Any, most: int) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, "must be a whole number")
    if not 1 <= value <= most:
        raise ValidationError(field, f"must be between 1 and {most}")
    return value


def etag_by_part(value: Any, most: int) -> dict[int, str]:
    """`{part number: ETag}`, part numbers as JSON object keys; ETags quoted or not."""
    if not isinstance(value, dict) or not value:
        raise ValidationError("etag_by_part", "must map part numbers to ETags")
    out: dict[int, str] = {}
    for key, etag in value.items():
        field = f"etag_by_part.{key}"
        if not _PART_NUMBER.fullmatch(key):
            raise ValidationError(field, "is not a part number")
        digits = key.lstrip("0")  # int() refuses thousands of digits: count them first
        number = int(digits) if 0 < len(digits) <= len(str(most)) else 0
        if not 1 <= number <= most:
            raise ValidationError(field, f"part numbers go from 1 to {most}")
        if number in out:
            raise ValidationError(field, "names a part twice")
        if not isinstance(etag, str) or not etags.is_part_etag(etags.unquoted(etag)):
            raise ValidationError(field, "must be the ETag the part's upload answered")
        out[number] = etags.unquoted(etag)
    return dict(sorted(out.items()))


def pattern(field: str, raw: str) -> str:
    """A path filter: a regular expression, checked before it reaches the database."""
    return patterns.checked(field, raw, MAX_PATTERN)
