"""The `search` parameter of every list: at most MAX_WORDS words and MAX_CHARS characters.

Each word is looked up in the whole installation's full-text index before the caller's
scope narrows anything (storage/search.py), so the number of words bounds what one request
can make every reader wait for. The bounds are the interface's, stated in the OpenAPI
document (`SCHEMA`): a generated client checks them, and a request within them is never
refused for its words. Words are counted as sent (`a a` is two); the server then looks
each up once.
"""

from __future__ import annotations

import re
from typing import Any

from edge.kernel.errors import ValidationError

MAX_WORDS = 16
MAX_CHARS = 256
_WORD = re.compile(r"\w+")
# At most MAX_WORDS runs of word characters (the same `\w` the server counts with).
PATTERN = rf"^\W*(\w+\W+){{0,{MAX_WORDS - 1}}}(\w+\W*)?$"
SCHEMA: dict[str, Any] = {
    "type": "string",
    "maxLength": MAX_CHARS,
    "pattern": PATTERN,
    "description": f"Words to find, each a prefix (at most {MAX_WORDS} words)",
}
TOO_BROAD = "is too broad: it would read too much of the index; add words or use longer ones"


def checked(text: str) -> str | None:
    """`text` stripped (None if empty), or a 400 naming `search` past the bounds."""
    if len(text) > MAX_CHARS:
        raise ValidationError("search", f"must be at most {MAX_CHARS} characters")
    if len(_WORD.findall(text)) > MAX_WORDS:
        raise ValidationError("search", f"must hold at most {MAX_WORDS} words")
    return text.strip() or None
