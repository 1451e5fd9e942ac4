"""api/shapes.py says "fits" only where jsonschema finds no shape error either.

Every body schema of every route is tried with bodies built from it: fitting ones, and ones
with a wrong type, an unknown field or a missing required field at each place in turn.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from api import schemas, shapes
from edge.app import ROUTES
from edge.kernel.errors import SchemaError

SAMPLES: dict[str, list[Any]] = {
    "string": ["text", ""],
    "boolean": [True, False],
    "integer": [3, 0],
    "number": [2.5, 7],
    "null": [None],
    "object": [{}],
    "array": [[]],
}
STRANGERS = ["text", True, 3, 2.5, 1.0, None, {}, [], {"x": 1}, ["a", 1]]


def _fitting(schema: Any) -> Any:
    """A value of the schema's shape (its first type; every property filled in)."""
    if not isinstance(schema, dict):
        return {}
    kinds = schema.get("type", "object")
    kind = kinds if isinstance(kinds, str) else kinds[0]
    if kind == "object":
        return {name: _fitting(sub) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        item = schema.get("items")
        return [_fitting(item)] if isinstance(item, dict) else []
    return SAMPLES[kind][0]


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _places(item, (*path, index))
    return found


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    out = copy.deepcopy(value)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return out


def _variants(schema: dict[str, Any]) -> list[Any]:
    base = _fitting(schema)
    out = [base, {}]
    for path in _places(base):
        for stranger in STRANGERS:
            out.append(_replaced(base, path, stranger))
        here = base
        for step in path:
            here = here[step]
        if isinstance(here, dict):
            out.append(_replaced(base, path, {**here, "unknown_field": 1}))
            for key in here:
                out.append(_replaced(base, path, {k: v for k, v in here.items() if k != key}))
    return out


BODIES = {f"{r.method} {r.path}": r.body for r in ROUTES if r.body is not None}


@pytest.mark.parametrize("route", sorted(BODIES))
def test_fits_only_what_jsonschema_accepts(route: str) -> None:
    schema = BODIES[route]
    fitting = [body for body in _variants(schema) if shapes.fits(schema, body)]
    refused = []
    for body in fitting:
        try:
            schemas.validate(schema, body)
        except SchemaError as exc:
            refused.append((body, str(exc)))
    assert refused == []


def test_the_quick_check_serves_nearly_every_route() -> None:
    """Were `fits` to say no to everything, every body would go to jsonschema again."""
    served = [r for r, s in BODIES.items() if any(shapes.fits(s, b) for b in _variants(s))]
    assert len(served) >= len(BODIES) - 2


def test_a_fitting_body_skips_the_validator_and_a_bad_one_keeps_its_message() -> None:
    from api.groups import CREATE_GROUP

    assert shapes.fits(CREATE_GROUP, {"name": "North", "tags": ["a"], "project_id": None})
    for bad in ({}, {"name": 3}, {"name": "x", "colour": "red"}, {"name": "x", "tags": [1]}):
        assert not shapes.fits(CREATE_GROUP, bad)
        with pytest.raises(SchemaError):
            schemas.validate(CREATE_GROUP, bad)


def test_unknown_keywords_leave_it_to_jsonschema() -> None:
    schema = {"type": "object", "patternProperties": {"^x": {"type": "string"}}}
    assert not shapes.fits(schema, {"x1": "a"})
    assert not shapes.fits({"type": "integer"}, 1.0)  # an integral float: jsonschema decides


def test_rules_of_keys_that_report_no_shape_error_keep_the_quick_check() -> None:
    """A twin PATCH's `propertyNames` (its keys' lengths, which the service checks) sent
    every twin PATCH to jsonschema, some 20 us of its round trip (#29); rules of keys that
    could report a shape error still do."""
    from api.twins import PATCH_TWIN

    assert shapes.fits(PATCH_TWIN, {"desired": {"speed": 3}})
    assert shapes.fits(PATCH_TWIN, {"reported": None, "version": 4})
    assert not shapes.fits(PATCH_TWIN, {"desired": 3})
    assert not shapes.fits(PATCH_TWIN, {"desired": {}, "colour": "red"})
    typed = {"type": "object", "propertyNames": {"type": "string"}}
    assert not shapes.fits(typed, {"a": 1})
