"""Regular expressions from clients: the one check before any is compiled.

The `regex` module compiles a counted repeat by spelling its minimum out: `a{10000000}`
becomes ten million copies of `a`, which took 9 s and 2.6 GB to compile on the project
machine, and `a{1000000000}` exhausts the memory of the whole server before any time
budget (edge/data/matchers.py, storage/patterns.py) can start, since those budgets count
matching, not compiling. Nested repeats multiply (`(?:(?:a{100}){100}){100}`).

So a pattern's spelled-out size is estimated from its text first, conservatively (every
character and escape counts as one item, a group as the items in it, a counted repeat
multiplies the item before it by its minimum) and refused past MAX_SPELLED_OUT, which no
filter on a path or a name needs: a plain 256-character pattern is 256 items, and no path
holds more than 1,024 characters. Only then is the pattern compiled, to name any error.
"""

from __future__ import annotations

import re

import regex

from edge.kernel.errors import ValidationError

MAX_SPELLED_OUT = 1024
# A counted repeat: {m}, {m,}, {m,n} (spaces allowed, as in verbose mode); {,n} repeats
# at least zero times and spells nothing out.
_REPEAT = re.compile(r"\{\s*(\d+)\s*(?:,\s*\d*\s*)?\}")
_BRACED_ESCAPES = frozenset("pPNxuUg")  # escapes that may carry a {...} of their own


def checked(field: str, pattern: str, max_length: int) -> str:
    """The pattern, once it is short enough, spells out little enough and compiles (else
    a 400 naming `field`)."""
    if len(pattern) > max_length:
        raise ValidationError(field, f"must be at most {max_length} characters")
    if spelled_out(pattern) > MAX_SPELLED_OUT:
        raise ValidationError(
            field,
            f"repeats too much: its counted repeats may spell out at most {MAX_SPELLED_OUT}"
            " items (write {m,} for 'at least m' where you can)",
        )
    try:
        regex.compile(pattern)
    except regex.error as exc:
        raise ValidationError(field, f"is not a valid regular expression ({exc.msg})") from None
    return pattern


def spelled_out(pattern: str) -> int:
    """An upper estimate of the items `regex` spells out to compile `pattern`."""
    frames = [0]  # items of each open group, outermost first
    last = 0  # size of the item a repeat would apply to
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "(":
            frames.append(0)
            last, i = 0, i + 1
            continue
        if char == ")" and len(frames) > 1:
            last = max(frames.pop(), 1)
            frames[-1] += last
            i += 1
            continue
        repeat = _REPEAT.match(pattern, i) if char == "{" else None
        if repeat is not None:
            times = int(repeat.group(1))
            if times > 1:
                frames[-1] += last * (times - 1)
                last *= times
            i = repeat.end()
            continue
        i = _item_end(pattern, i)
        last = 1
        frames[-1] += 1
    return sum(frames)


def _item_end(pattern: str, i: int) -> int:
    """Where the item at `i` ends: an escape (with its {...} if it takes one), a set, or one
    character."""
    char = pattern[i]
    if char == "\\":
        if i + 2 < len(pattern) and pattern[i + 1] in _BRACED_ESCAPES and pattern[i + 2] == "{":
            close = pattern.find("}", i + 3)
            return len(pattern) if close < 0 else close + 1
        return i + 2
    if char == "[":
        return _set_end(pattern, i)
    return i + 1


def _set_end(pattern: str, i: int) -> int:
    """The end of the set opening at `i`: its first `]` that is neither escaped nor first
    in the set. A nested set (`[[a-z]--[aeiou]]`) ends later than that, so what follows
    is counted as items of its own: more than it is, never less."""
    n = len(pattern)
    i += 1
    if i < n and pattern[i] == "^":
        i += 1
    if i < n and pattern[i] == "]":
        i += 1
    while i < n:
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i + 1
        i += 1
    return n
