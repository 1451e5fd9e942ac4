"""Reading request bodies: JSON (checked against a schema) and forms."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from api import schemas
from edge.errors import SchemaError, ValidationError

JSON_TYPES = ("application/json",)
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


async def read_json(request: web.Request, schema: schemas.Schema) -> dict[str, Any]:
    if request.content_type not in JSON_TYPES and not request.content_type.endswith("+json"):
        raise ValidationError(None, "Content-Type must be application/json")
    raw = await request.read()
    try:
        body = json.loads(raw) if raw else None
    except (ValueError, UnicodeDecodeError):
        raise ValidationError("body", "is not valid JSON") from None
    if not isinstance(body, dict):
        raise SchemaError("body: must be a JSON object")
    schemas.validate(schema, body)
    return body


async def read_form(request: web.Request, schema: schemas.Schema) -> dict[str, str]:
    """A form's fields as strings; file parts are not accepted here."""
    if request.content_type not in FORM_TYPES:
        raise ValidationError(None, "Content-Type must be application/x-www-form-urlencoded")
    try:
        form = await request.post()
    except (ValueError, HttpProcessingError):  # no boundary, a broken part header, ...
        raise ValidationError("body", "is not a valid form") from None
    values: dict[str, str] = {}
    for key, value in form.items():
        if not isinstance(value, str):
            raise ValidationError(key, "must be a text field")
        values[key] = value
    schemas.validate(schema, values)
    return values
