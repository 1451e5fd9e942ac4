"""Schemathesis hooks for tests/api/test_schemathesis.py (loaded by SCHEMATHESIS_HOOKS).

`last_evaluated_key` is a key the server signs (docs/conventions.md): no generated string
can be one, so every request carrying one would be refused, rightly. The run leaves it out
of the requests it generates; tests/api/test_listing.py covers it.
"""

from __future__ import annotations

from typing import Any

import schemathesis

SERVER_ISSUED = ("last_evaluated_key",)


@schemathesis.hook
def map_query(context: schemathesis.HookContext, query: dict[str, Any] | None) -> Any:
    if not query:
        return query
    return {k: v for k, v in query.items() if k not in SERVER_ISSUED}
