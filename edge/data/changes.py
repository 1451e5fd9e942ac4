"""What a data write tells after its commit (`Data.changes`): the group, the path and how
it changed, never the value (a listener that carries it on decides who may read it, and
the reader fetches the value under its own rights). The live change feed (edge/live/)
listens; docs/events.md describes what a client sees."""

from __future__ import annotations

from dataclasses import dataclass

# How an entry changed: the method that changed it; DELETE with cascade is "delete_below"
# and names the top of the subtree that went.
OPERATIONS = ("put", "post", "patch", "delete", "delete_below")


@dataclass(frozen=True)
class DataChanged:
    org_id: str
    group_id: str
    path: str
    operation: str


def operation(method: str, *, cascade: bool = False) -> str:
    """The change's name for a write's method (`PUT`, `delete`, ...)."""
    name = method.lower()
    return "delete_below" if name == "delete" and cascade else name
