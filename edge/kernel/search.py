"""The `search` parameter of every list: at most MAX_WORDS words and MAX_CHARS characters.

Each word is looked up in the whole installation's full-text index before the caller's
scope narrows anything (storage/search.py), so the number of words bounds what one request
can make every reader wait for. A word is a token of the index (runs of letters and digits
as its unicode61 tokenizer splits them: `_`, spaces and punctuation separate words, so
`a_b` is two), counted as sent (`a a` is two); the server then looks each up once.

The OpenAPI document (`SCHEMA`) states the length as `maxLength` and the word cap in its
description only: a JSON Schema `pattern` is an ECMA-262 regular expression, whose `\\w` is
ASCII, and no pattern there can say what a letter is as the tokenizer does (17 Cyrillic
words would pass it and be refused here).
"""

from __future__ import annotations

from typing import Any

from edge.kernel.errors import ValidationError
from storage.search import tokens

MAX_WORDS = 16
MAX_CHARS = 256
SCHEMA: dict[str, Any] = {
    "type": "string",
    "maxLength": MAX_CHARS,
    "description": (
        f"Words to find, each a prefix; at most {MAX_WORDS} words, a word being a run of"
        " letters and digits (`_`, spaces and punctuation separate words: `a_b` is two)"
    ),
}
TOO_BROAD = "is too broad: it would read too much of the index; add words or use longer ones"


def checked(text: str) -> str | None:
    """`text` stripped (None if empty), or a 400 naming `search` past the bounds."""
    if len(text) > MAX_CHARS:
        raise ValidationError("search", f"must be at most {MAX_CHARS} characters")
    if len(tokens(text)) > MAX_WORDS:
        raise ValidationError("search", f"must hold at most {MAX_WORDS} words")
    return text.strip() or None
