"""JSON Schema building blocks for request bodies (shape only: values are checked by edge).

A body that breaks its shape (missing, wrong type, unknown field) is a 406; a body whose
values break a rule (range, format) is a 400 raised by the service. Both name the field.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as JsonSchemaError

from edge.errors import SchemaError

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


def validate(schema: Schema, value: Any) -> None:
    validator = _validators.get(id(schema))
    if validator is None:
        validator = _validators[id(schema)] = Draft202012Validator(schema)
    error = next(iter(sorted(validator.iter_errors(value), key=_depth)), None)
    if error is not None:
        raise SchemaError(_message(error))


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
