"""The twin document's rules, as pure functions (docs/twins.md).

- An update is a JSON merge patch (RFC 7396) of a section: an object merges key by key,
  `null` removes a key, anything else replaces the value.
- `metadata` has the shape of the sections, each leaf the time it was last set: the patch
  with its leaves replaced by that time is merged into it the same way.
- The delta is what `desired` holds that `reported` does not (a key missing from reported
  or holding another value; objects compared key by key): what the device still has to
  apply. Keys only in `reported` are not in it.
- Limits: the two sections together, as compact JSON, at most `max_bytes`; objects and
  arrays nested at most `max_depth` deep inside a section; keys of 1 to `max_key_chars`
  characters, none of them a control character (U+0000 to U+001F, U+007F: a key
  is a name a device's code and a console show and match, where a NUL or an escape is
  only ever a mistake or a trick; such a key may still be removed, with null, as one
  stored before this rule may be). Each refusal names its rule.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from edge.kernel.errors import ValidationError

JsonObject = dict[str, Any]
SECTIONS = ("desired", "reported")
MAX_DEPTH = 8
MAX_KEY_CHARS = 128
CONTROL = re.compile("[\x00-\x1f\x7f]")  # no key holds one
CONTROL_RULE = "keys must not hold control characters (U+0000 to U+001F, U+007F)"


@dataclass(frozen=True)
class Limits:
    max_bytes: int
    max_depth: int = MAX_DEPTH
    max_key_chars: int = MAX_KEY_CHARS


def merge(target: Any, patch: Any) -> Any:
    """RFC 7396 MergePatch(target, patch)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge(out.get(key), value)
    return out


def stamped(patch: JsonObject, when: str) -> JsonObject:
    """The patch with every leaf set to `when` (nulls kept: they remove the key's time)."""
    return {
        key: stamped(value, when) if isinstance(value, dict) else None if value is None else when
        for key, value in patch.items()
    }


def delta(desired: JsonObject, reported: JsonObject) -> JsonObject:
    """What `desired` holds that `reported` does not."""
    out: JsonObject = {}
    for key, want in desired.items():
        have = reported.get(key)
        if isinstance(want, dict) and isinstance(have, dict):
            inner = delta(want, have)
            if inner:
                out[key] = inner
        elif key not in reported or have != want:
            out[key] = want
    return out


def size(desired: JsonObject, reported: JsonObject) -> int:
    """The document's size as the limit counts it: both sections as compact UTF-8 JSON."""
    both = {"desired": desired, "reported": reported}
    text = json.dumps(both, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8"))


def check_patch(section: str, patch: Any, limits: Limits) -> None:
    """A section's patch has the shape of a section: an object (or null, which clears it),
    with keys and nesting within the limits."""
    if patch is None:
        return
    if not isinstance(patch, dict):
        raise ValidationError(section, "must be an object (or null to clear it)")
    _check_level(section, patch, 1, limits)


def check_size(desired: JsonObject, reported: JsonObject, limits: Limits) -> None:
    found = size(desired, reported)
    if found > limits.max_bytes:
        raise ValidationError(
            "twin",
            f"the document would be {found} bytes, over the limit of {limits.max_bytes}"
            " (desired and reported together, as compact JSON)",
        )


def _check_level(where: str, value: Any, depth: int, limits: Limits) -> None:
    if depth > limits.max_depth:
        raise ValidationError(where, f"nested deeper than the limit of {limits.max_depth} levels")
    if isinstance(value, dict):
        for key, inner in value.items():
            if not 1 <= len(key) <= limits.max_key_chars:
                raise ValidationError(
                    where, f"keys must be 1 to {limits.max_key_chars} characters long"
                )
            if inner is not None and CONTROL.search(key):  # removing one stored before: yes
                raise ValidationError(where, CONTROL_RULE)
            if isinstance(inner, dict | list):
                _check_level(f"{where}.{key}", inner, depth + 1, limits)
    else:
        for inner in value:
            if isinstance(inner, dict | list):
                _check_level(where, inner, depth + 1, limits)
