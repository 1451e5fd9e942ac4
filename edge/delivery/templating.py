"""Safe substitution for e-mail templates: `{{ name }}` and nothing else.

A template is text with placeholders; rendering replaces each in a single pass, so a value
that itself contains `{{ org_name }}` stays as written (no template injection), and there is
no code, no attribute access, no filters. In HTML bodies every value is HTML-escaped.
Unknown names are refused when a template is written, so a typo never reaches a recipient.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping

PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
CONTEXT_VARIABLES = (
    "org_name",
    "org_id",
    "project_name",
    "project_id",
    "username",
    "first_name",
    "last_name",
    "nickname",
    "datetime",
    "date",
    "time",
    "zoneinfo",
)
MESSAGE_VARIABLES = ("temporary_password", "reset_token", "expires_hours", "sign_in_url")
KNOWN = frozenset(CONTEXT_VARIABLES + MESSAGE_VARIABLES)


def names_in(text: str) -> list[str]:
    """Every placeholder name used in `text`, in order of first use."""
    seen: dict[str, None] = {}
    for match in PLACEHOLDER.finditer(text):
        seen.setdefault(match.group(1), None)
    return list(seen)


def unknown_names(texts: Iterable[str], custom_args: Iterable[str]) -> list[str]:
    allowed = KNOWN | set(custom_args)
    found: dict[str, None] = {}
    for text in texts:
        for name in names_in(text):
            if name not in allowed:
                found.setdefault(name, None)
    return list(found)


def valid_custom_arg(name: str) -> bool:
    return bool(NAME.match(name)) and name not in KNOWN


def render(text: str, values: Mapping[str, str], *, escape: bool = False) -> str:
    """Fill the placeholders; a name without a value renders as an empty string."""

    def fill(match: re.Match[str]) -> str:
        value = values.get(match.group(1), "")
        return html.escape(value, quote=True) if escape else value

    return PLACEHOLDER.sub(fill, text)
