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
# The rules of an object's keys: no shape error comes from them while they hold none of the
# shape keywords (a twin's key lengths: the twin PATCH went to jsonschema for them, #29).
_NAMES = frozenset(("propertyNames",))
# The Python types of each JSON type. An integral float is an integer to jsonschema: not
# listed, so such a value is left to the validator.
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "integer": (int,),
    "number": (int, float),
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
    if not isinstance(schema, dict) or not set(schema) <= _SHAPED | _IGNORED | _NAMES:
        return None
    if not _unshaped(schema.get("propertyNames", {})):
        return None
    kinds = schema.get("type")
    accepted: frozenset[type] | None = None
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else kinds
        if not isinstance(names, list) or not all(n in _TYPES for n in names):
            return None
        accepted = frozenset(t for n in names for t in _TYPES[n])
    fields: Check | None = None
    if {"properties", "required", "additionalProperties"} & set(schema):
        fields = _object(schema)
        if fields is None:
            return None
    item: Check | None = None
    if "items" in schema:
        item = _compile(schema["items"])
        if item is None:
            return None

    def check(value: Any) -> bool:
        kind = type(value)
        if accepted is not None and kind not in accepted:
            return False
        if fields is not None and kind is dict and not fields(value):
            return False
        if item is not None and kind is list:
            for x in value:
                if not item(x):
                    return False
        return True

    return check


def _unshaped(schema: Any) -> bool:
    """Whether a subschema can report no shape error: only keywords that never do."""
    return isinstance(schema, dict) and set(schema) <= _IGNORED


def _object(schema: Schema) -> Check | None:
    properties: dict[str, Check] = {}
    for name, sub in schema.get("properties", {}).items():
        compiled = _compile(sub)
        if compiled is None:
            return None
        properties[name] = compiled
    required = tuple(schema.get("required", ()))
    extra = schema.get("additionalProperties", True)
    if extra is False:
        others: Check | None = None
    else:
        others = _compile(extra)
        if others is None:
            return None

    def check(value: dict[str, Any]) -> bool:
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
