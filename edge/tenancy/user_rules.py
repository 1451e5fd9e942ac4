"""Value rules for the fields of a user (create and patch bodies), as stored columns.

The body's shape was checked by the HTTP layer; here each value is normalized or refused
with a 400 naming the field.
"""

from __future__ import annotations

import json
import re
import zoneinfo
from functools import lru_cache
from typing import Any

from edge import fields
from edge.errors import ValidationError

MIN_USERNAME = 3
MAX_URL = 2048
MAX_ATTRIBUTES_BYTES = 64 * 1024
PROFILE_TEXT = ("first_name", "middle_name", "last_name", "nickname")
FLAGS = ("is_active", "is_delete_protected")
ATTRIBUTES = ("custom_attributes", "restricted_custom_attributes")
_PHONE = re.compile(r"^\+[1-9][0-9]{6,14}$")
_PHONE_SEPARATORS = re.compile(r"[\s\-.()/]")


def username(field: str, value: Any) -> str:
    """A username: not shaped like a phone number, since sign-in reads such a login as a
    phone number, and one login value must never name two accounts (docs/users-and-account.md)."""
    name = fields.identifier(field, value)
    if len(name) < MIN_USERNAME:
        raise ValidationError(field, f"must be at least {MIN_USERNAME} characters")
    if looks_like_phone(name):
        raise ValidationError(
            field, "must not be a phone number: phone numbers sign in as phone_number"
        )
    return name


def looks_like_phone(text: str) -> bool:
    return bool(_PHONE.match(clean_phone(text)))


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
    text = login.strip()
    try:
        return phone("username", text) or text.casefold()
    except ValidationError:
        return text.casefold()


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones() | {"UTC"})


def zone(field: str, value: Any) -> str:
    name = fields.text(field, value, max_length=64)
    if name not in _zones():
        raise ValidationError(field, "must be an IANA time zone such as Europe/Paris")
    return name


def optional_text(field: str, value: Any, max_length: int = fields.MAX_NAME) -> str | None:
    if value is None:
        return None
    return fields.text(field, value, max_length=max_length, required=False) or None


def attributes(field: str, value: Any) -> dict[str, Any]:
    """A custom-attributes object, within the size it may take stored as JSON."""
    mapping = fields.mapping(field, value)
    text = json.dumps(mapping, separators=(",", ":"))
    if len(text.encode()) > MAX_ATTRIBUTES_BYTES:
        raise ValidationError(field, f"must be at most {MAX_ATTRIBUTES_BYTES} bytes as JSON")
    return mapping


def columns(body: dict[str, Any]) -> dict[str, Any]:
    """The stored columns for every profile field present in the body."""
    out: dict[str, Any] = {}
    if "email" in body:
        out["email"] = fields.email("email", body["email"])
        out["email_folded"] = out["email"].casefold()
    if "username" in body:
        out["username"] = username("username", body["username"])
        out["username_folded"] = out["username"].casefold()
    if "phone_number" in body:
        out["phone_number"] = out["phone_folded"] = phone("phone_number", body["phone_number"])
    for name in PROFILE_TEXT:  # names that identify the person: no control characters
        if name in body:
            out[name] = optional_text(name, body[name])
            if out[name] is not None:
                fields.plain(name, out[name])
    if "picture" in body:
        out["picture"] = optional_text("picture", body["picture"], MAX_URL)
    if "locale" in body:
        out["locale"] = fields.locale("locale", body["locale"])
    if "zoneinfo" in body:
        out["zoneinfo"] = zone("zoneinfo", body["zoneinfo"])
    if "tags" in body:
        out["tags"] = fields.tags("tags", body["tags"])
    for name in FLAGS:
        if name in body:
            out[name] = fields.boolean(name, body[name])
    for name in ATTRIBUTES:
        if name in body:
            out[name] = attributes(name, body[name])
    return out
