"""JSON Schema building blocks for request bodies (shape only: values are checked by edge).

A body that breaks its shape (missing, wrong type, unknown field) is a 406; a body whose
values break a rule (range, format) is a 400 raised by the service. Both name the field.
The rules are written into the schemas too (`minLength`, `enum`, ...), for the OpenAPI
document: clients see what will be refused.
"""

from __future__ import annotations

import zoneinfo
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as JsonSchemaError

from edge.auth import hashing
from edge.kernel import fields, ids
from edge.kernel.errors import SchemaError

Schema = dict[str, Any]
STR: Schema = {"type": "string"}
NULLABLE_STR: Schema = {"type": ["string", "null"]}
BOOL: Schema = {"type": "boolean"}
INT: Schema = {"type": "integer"}
NUMBER: Schema = {"type": "number"}
OBJECT: Schema = {"type": "object"}
TAGS: Schema = {"type": "array", "items": STR}
STR_LIST: Schema = {"type": "array", "items": STR}

_validators: dict[int, Draft202012Validator] = {}


def obj(
    properties: dict[str, Schema], required: tuple[str, ...] = (), *, title: str | None = None
) -> Schema:
    schema: Schema = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    if title:
        schema["title"] = title
    return schema


# The keywords of a body's shape (406). A schema's other keywords (minLength, enum, pattern,
# minimum, ...) document the rules the services enforce with their own 400s and messages;
# the schemathesis run (tests/api/test_schemathesis.py) holds the two together.
# Conditional parts (`if`/`then`, `anyOf`) document rules between fields and are not shape.
SHAPE = ("type", "required", "additionalProperties")
_CONDITIONAL = frozenset(("if", "then", "else", "allOf", "anyOf", "oneOf", "not"))


def validate(schema: Schema, value: Any) -> None:
    validator = _validators.get(id(schema))
    if validator is None:
        validator = _validators[id(schema)] = Draft202012Validator(schema)
    shape = (e for e in validator.iter_errors(value) if _is_shape(e))
    error = next(iter(sorted(shape, key=_depth)), None)
    if error is not None:
        raise SchemaError(_message(error))


def _is_shape(error: JsonSchemaError) -> bool:
    return error.validator in SHAPE and not _CONDITIONAL & set(error.absolute_schema_path)


def _depth(error: JsonSchemaError) -> tuple[int, str]:
    return len(error.absolute_path), str(error.validator)


def _message(error: JsonSchemaError) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required":
        present = error.instance if isinstance(error.instance, dict) else {}
        missing = next(n for n in error.validator_value if n not in present)
        return f"{_join(where, missing)}: is required"
    if error.validator == "additionalProperties":
        known = set(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - known)[0]
        return f"{_join(where, extra)}: is not a known field"
    if error.validator == "type":
        expected = error.validator_value
        kinds = " or ".join(expected) if isinstance(expected, list) else expected
        return f"{where or 'body'}: must be of type {kinds}"
    return f"{where or 'body'}: {error.message}"


def _join(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


# -- The rules of edge/kernel/fields.py and its kin, as schemas (for the document; see SHAPE) ------
# Characters a name that identifies never holds (edge/kernel/fields.py, `identifier`).
_NEVER = (
    "\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029\\ufeff"
)


def text(max_length: int = fields.MAX_NAME, *, required: bool = True) -> Schema:
    """Free text (stripped); `required`: not blank."""
    schema: Schema = {"type": "string", "maxLength": max_length}
    return {**schema, "pattern": "\\S"} if required else schema


def identifier(max_length: int = fields.MAX_NAME, min_length: int = 1) -> Schema:
    """A name that identifies: not blank, no control or bidirectional-formatting characters."""
    return {
        "type": "string",
        "minLength": min_length,
        "maxLength": max_length,
        "pattern": f"^[^{_NEVER}]*[^{_NEVER}\\s][^{_NEVER}]*$",
    }


def single_line(max_length: int) -> Schema:
    """Text that ends up in a header line: not blank, no control characters."""
    never = "\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029"
    return {**text(max_length), "pattern": f"^[^{never}]*[^{never}\\s][^{never}]*$"}


def nullable(schema: Schema) -> Schema:
    return {**schema, "type": [schema["type"], "null"]}


def integer(low: int, high: int) -> Schema:
    return {"type": "integer", "minimum": low, "maximum": high}


NAME = identifier()
DESCRIPTION = text(fields.MAX_DESCRIPTION, required=False)
TAG_LIST: Schema = {
    "type": "array",
    "items": {"type": "string", "maxLength": fields.MAX_TAG},
    "maxItems": fields.MAX_TAGS,
}
ORG_NAME: Schema = {**text(), "pattern": "^[\\w .,\\-]*\\w[\\w .,\\-]*$"}
ALIAS: Schema = {
    "type": ["string", "null"],
    "pattern": "^([a-z0-9][a-z0-9_\\-]{1,62})?$",
    # never shaped like an ID; "type" here, or the `not` of a vacuous pattern refuses null
    "not": {"type": "string", "pattern": f"^[A-Za-z0-9]{{{ids.ID_LENGTH}}}$"},
}
EMAIL: Schema = {
    "type": "string",
    "maxLength": 254,
    "pattern": f"^[^@\\s{_NEVER}]+@[^@\\s{_NEVER}]+$",
}
LOCALE: Schema = {
    "type": "string",
    "pattern": "^[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|[0-9]{3}))?$",
}
TIME_ZONE: Schema = {"type": "string", "enum": sorted(zoneinfo.available_timezones() | {"UTC"})}
PHONE: Schema = {"type": ["string", "null"], "pattern": "^\\+[1-9][0-9]{6,14}$"}
PASSWORD: Schema = {
    "type": "string",
    "minLength": hashing.MIN_LENGTH,
    "maxLength": hashing.MAX_LENGTH,
}
PROFILE_NAME: Schema = {
    "type": ["string", "null"],
    "maxLength": fields.MAX_NAME,
    "pattern": f"^[^{_NEVER}]*$",
}
USERNAME: Schema = {
    **identifier(min_length=3),
    "not": {"pattern": "^(\\+|00)[1-9][0-9]{6,14}$"},  # a phone number signs in as one
}
