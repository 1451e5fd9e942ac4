"""Value rules shared by every resource: names, aliases, tags, locales, time zones,
addresses, phone numbers, custom attributes, ranges.

Each rule returns the normalized value or raises ValidationError naming the field.
"""

from __future__ import annotations

import json
import re
import unicodedata
import zoneinfo
from functools import lru_cache
from typing import Any

from edge.kernel import ids
from edge.kernel.errors import ValidationError

MAX_NAME = 128
MAX_DESCRIPTION = 2048
MAX_TAGS = 64
MAX_TAG = 128
MAX_URL = 2048
MAX_ATTRIBUTES_BYTES = 64 * 1024
_ALIAS = re.compile(r"^[a-z0-9][a-z0-9_\-]{1,62}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_LOCALE = re.compile(r"^[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|[0-9]{3}))?$")
_ORG_NAME_PUNCT = set(" .,_-")
_PHONE = re.compile(r"^\+[1-9][0-9]{6,14}$")
_PHONE_SEPARATORS = re.compile(r"[\s\-.()/]")
# Never part of a name that identifies someone or something: C0 and C1 controls (NUL, line
# breaks, escape sequences that rewrite a terminal or a log), bidirectional formatting
# (U+202E makes 'adminexe.txt' display as 'admintxt.exe'), line and paragraph separators,
# the byte-order mark, and unpaired surrogates (which cannot be stored as UTF-8).
_NOT_IN_IDENTIFIERS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\u2028\u2029\ufeff\ud800-\udfff]"
)
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def text(field: str, value: Any, *, max_length: int = MAX_NAME, required: bool = True) -> str:
    if not isinstance(value, str):
        raise ValidationError(field, "must be a string")
    stripped: str = value.strip()
    if required and not stripped:
        raise ValidationError(field, "must not be empty")
    if len(stripped) > max_length:
        raise ValidationError(field, f"must be at most {max_length} characters")
    return stripped


def description(field: str, value: Any) -> str:
    """A resource's free-text description: optional, up to MAX_DESCRIPTION characters (orgs,
    projects, groups, e-mail templates and billing rates take the same rule)."""
    return text(field, value, max_length=MAX_DESCRIPTION, required=False)


def identifier(field: str, value: Any, *, max_length: int = MAX_NAME) -> str:
    """A name that identifies (a username, an e-mail, a project, group or role name):
    text without control, bidirectional-formatting or separator characters.

    Free text (descriptions, custom attributes) keeps every character it was given.
    """
    name = text(field, value, max_length=max_length)
    plain(field, name)
    return name


def plain(field: str, value: str) -> None:
    if _NOT_IN_IDENTIFIERS.search(value):
        raise ValidationError(
            field, "must not contain control, bidirectional-formatting or separator characters"
        )


def single_line(field: str, value: Any, *, max_length: int = MAX_NAME) -> str:
    """Text that ends up in a header line (a mail subject): no control characters, so it
    cannot break the line it is written into."""
    line = text(field, value, max_length=max_length)
    if _CONTROLS.search(line):
        raise ValidationError(field, "must be one line without control characters")
    return line


def org_name(field: str, value: Any) -> str:
    """Letters, digits, spaces, period, comma, underscore and hyphen only.

    Combining marks count as part of the letter they sit on: without them no name in
    Hindi or Thai, nor a decomposed 'é', could be written.
    """
    name = text(field, value)
    if not all(_org_name_char(ch) for ch in name):
        raise ValidationError(
            field,
            "may contain only letters, digits, spaces, periods, commas, underscores and hyphens",
        )
    return name


def _org_name_char(ch: str) -> bool:
    return ch.isalnum() or ch in _ORG_NAME_PUNCT or unicodedata.category(ch).startswith("M")


def alias(field: str, value: Any) -> str | None:
    if value is None or value == "":
        return None
    name = text(field, value, max_length=63).lower()
    if not _ALIAS.match(name):
        raise ValidationError(
            field,
            "must be 2 to 63 lowercase letters, digits, hyphens or underscores, "
            "starting with a letter or digit",
        )
    if ids.looks_like_id(name):  # the lowered form: 'K' (Kelvin sign) lowers to ASCII 'k'
        raise ValidationError(field, "must not look like an ID")
    return name


def tags(field: str, value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise ValidationError(field, "must be a list of strings")
    cleaned = list(dict.fromkeys(t.strip() for t in value if t.strip()))
    if len(cleaned) > MAX_TAGS:
        raise ValidationError(field, f"must have at most {MAX_TAGS} tags")
    if any(len(t) > MAX_TAG for t in cleaned):
        raise ValidationError(field, f"each tag must be at most {MAX_TAG} characters")
    return cleaned


def normalize_locale(value: Any) -> Any:
    """'en_us' -> 'en-US', 'zh_hant_tw' -> 'zh-Hant-TW'; anything else is returned as given."""
    if not isinstance(value, str):
        return value
    parts = [p for p in value.strip().replace("_", "-").split("-") if p]
    if not parts:
        return value
    out = [parts[0].lower()]
    for part in parts[1:]:
        out.append(part.title() if len(part) == 4 else part.upper())
    return "-".join(out)


def locale(field: str, value: Any) -> str:
    normalized = normalize_locale(value)
    if not isinstance(normalized, str) or not _LOCALE.match(normalized):
        raise ValidationError(field, "must be a locale such as en-US")
    return normalized


def email(field: str, value: Any) -> str:
    address = identifier(field, value, max_length=254)
    if not _EMAIL.match(address):
        raise ValidationError(field, "must be an e-mail address")
    return address


def integer(field: str, value: Any, low: int, high: int) -> int:
    """A whole number; 5.0 counts, as JSON does not tell it from 5 (nor does JSON Schema)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, "must be a whole number")
    if not low <= value <= high:
        raise ValidationError(field, f"must be between {low} and {high}")
    return value


def boolean(field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValidationError(field, "must be true or false")
    return value


def mapping(field: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValidationError(field, "must be an object")
    return value


def choices(field: str, value: Any, allowed: tuple[str, ...]) -> list[str]:
    if not isinstance(value, list) or not value:
        raise ValidationError(field, f"must be a non-empty list drawn from {', '.join(allowed)}")
    for item in value:
        if item not in allowed:
            raise ValidationError(field, f"'{item}' is not one of {', '.join(allowed)}")
    return list(dict.fromkeys(value))


def optional_text(field: str, value: Any, max_length: int = MAX_NAME) -> str | None:
    """Text that may be absent: None, and empty text, stand for no value."""
    if value is None:
        return None
    return text(field, value, max_length=max_length, required=False) or None


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones() | {"UTC"})


def zone(field: str, value: Any) -> str:
    name = text(field, value, max_length=64)
    if name not in _zones():
        raise ValidationError(field, "must be an IANA time zone such as Europe/Paris")
    return name


def attributes(field: str, value: Any) -> dict[str, Any]:
    """A custom-attributes object, within the size it may take stored as JSON."""
    given = mapping(field, value)
    stored = json.dumps(given, separators=(",", ":"))
    if len(stored.encode()) > MAX_ATTRIBUTES_BYTES:
        raise ValidationError(field, f"must be at most {MAX_ATTRIBUTES_BYTES} bytes as JSON")
    return given


def looks_like_phone(value: str) -> bool:
    return bool(_PHONE.match(clean_phone(value)))


def clean_phone(value: str) -> str:
    """A phone number without separators: '+1 (555) 010-2000' -> '+15550102000'."""
    cleaned = _PHONE_SEPARATORS.sub("", value.strip())
    return "+" + cleaned[2:] if cleaned.startswith("00") else cleaned


def phone(field: str, value: Any) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise ValidationError(field, "must be a string")
    number = clean_phone(value)
    if not _PHONE.match(number):
        raise ValidationError(field, "must be an international phone number such as +15550102000")
    return number


def login_key(login: str) -> str:
    """A login as lookups and the sign-in throttle see it: a phone number without its
    punctuation ('+1 (555) 010-2000' -> '+15550102000'), anything else case-folded."""
    given = login.strip()
    try:
        return phone("username", given) or given.casefold()
    except ValidationError:
        return given.casefold()
