"""A quick yes to "does this body have its declared shape?", before jsonschema is asked.

`api/schemas.validate` runs the whole jsonschema validator on every body (tens of
microseconds even for `{"name": ...}`) to find the one shape error it reports. Most bodies
have none, so `fits` first checks the shape keywords (`type`, `required`,
`additionalProperties`) itself, straight from the schema. It answers True only when
jsonschema would find no shape error either; anything it is unsure of (a keyword it does
not know, a float where an integer is asked) is False, and the caller then runs
`schemas.validate`, which names the error (or finds none). So a body is refused exactly as
before, with the same message; only the bodies that fit skip the validator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from api.schemas import Schema

Check = Callable[[Any], bool]

# Keywords that never report a shape error here: rules the services enforce themselves,
# documentation, and conditional parts, whose errors `schemas.validate` leaves out.
_IGNORED = frozenset(
    (
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "format",
        "pattern",
        "minLength",
        "maxLength",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "if",
        "then",
        "else",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
    )
)
_SHAPED = frozenset(("type", "properties", "required", "additionalProperties", "items"))
_TYPES: dict[str, Check] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    # An integral float is an integer to jsonschema: unsure here, so the validator decides.
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) in (int, float),
}
_compiled: dict[int, tuple[Schema, Check | None]] = {}


def fits(schema: Schema, value: Any) -> bool:
    """True when `value` certainly has the shape `schema` declares."""
    found = _compiled.get(id(schema))
    if found is None or found[0] is not schema:
        found = _compiled[id(schema)] = (schema, _compile(schema))
    check = found[1]
    return check is not None and check(value)


def _compile(schema: Any) -> Check | None:
    """A check of one (sub)schema, or None when it uses a keyword this module leaves to
    jsonschema."""
    if schema is True or schema == {}:
        return lambda v: True
    if not isinstance(schema, dict) or not set(schema) <= _SHAPED | _IGNORED:
        return None
    parts: list[Check] = []
    kinds = schema.get("type")
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else kinds
        if not isinstance(names, list) or not all(n in _TYPES for n in names):
            return None
        tests = tuple(_TYPES[n] for n in names)
        parts.append(lambda v: any(test(v) for test in tests))
    if {"properties", "required", "additionalProperties"} & set(schema):
        check = _object(schema)
        if check is None:
            return None
        parts.append(check)
    if "items" in schema:
        item = _compile(schema["items"])
        if item is None:
            return None
        parts.append(lambda v: type(v) is not list or all(item(x) for x in v))
    return lambda v: all(part(v) for part in parts)


def _object(schema: Schema) -> Check | None:
    properties: dict[str, Check] = {}
    for name, sub in schema.get("properties", {}).items():
        check = _compile(sub)
        if check is None:
            return None
        properties[name] = check
    required = tuple(schema.get("required", ()))
    extra = schema.get("additionalProperties", True)
    if extra is False:
        others: Check | None = None
    else:
        others = _compile(extra)
        if others is None:
            return None

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return True  # not an object: only `type` speaks to it
        for name in required:
            if name not in value:
                return False
        for name, item in value.items():
            known = properties.get(name)
            if known is not None:
                if not known(item):
                    return False
            elif others is None or not others(item):
                return False
        return True

    return check
