"""Schemathesis hooks for tests/api/test_schemathesis.py (loaded by SCHEMATHESIS_HOOKS).

`last_evaluated_key` is a key the server signs (docs/conventions.md): no generated string
can be one, so every request carrying one would be refused, rightly. The run leaves it out
of the requests it generates; tests/api/test_listing.py covers it.

A boolean in the query is spelt as the interface says (`true/false/1/0`, and an empty value
is true: `?object_count=`; api/params.py). The document can only say `boolean`, so a
"schema-violating" string that is one of those spellings is accepted, rightly: such cases
are left out (which strings the run tries depends on the whole document, seed or not).
"""

from __future__ import annotations

from typing import Any

import schemathesis

from api.params import FALSE, TRUE

SERVER_ISSUED = ("last_evaluated_key",)


@schemathesis.hook
def map_query(context: schemathesis.HookContext, query: dict[str, Any] | None) -> Any:
    if not query:
        return query
    return {k: v for k, v in query.items() if k not in SERVER_ISSUED}


@schemathesis.hook
def filter_query(context: schemathesis.HookContext, query: dict[str, Any] | None) -> bool:
    if not query or context.operation is None:
        return True
    parameters = context.operation.definition.raw.get("parameters", [])
    booleans = {
        p["name"]
        for p in parameters
        if p.get("in") == "query" and p.get("schema", {}).get("type") == "boolean"
    }
    return not any(_spelt_as_boolean(query.get(name)) for name in booleans)


def _spelt_as_boolean(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in (*TRUE, *FALSE)
