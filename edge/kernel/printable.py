"""Text from clients, made safe to put in one log line.

Free text (descriptions, custom attributes, a login as typed) is stored exactly as given,
but whenever a log line quotes something a client sent, a line break in it would forge a
second log line, an escape sequence would rewrite the operator's terminal, and a
bidirectional override would make the line read differently than it is. `for_log`
escapes all of those (and lone surrogates) the way Python writes them in string literals,
and shortens the text, so one event stays one honest line.
"""

from __future__ import annotations

import re

MAX_LOGGED = 200
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\u2028\u2029\ufeff\ud800-\udfff]"
)


def for_log(value: object, limit: int = MAX_LOGGED) -> str:
    text = str(value)
    if len(text) > limit:
        text = text[:limit] + "..."
    return _UNSAFE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
