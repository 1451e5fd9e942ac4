"""Where the running request came from and who made it: set by the HTTP layer
(`set_origin`, resolved only when asked), read by the audit log (edge/kernel/audit.py) and
by the list engine, which counts a caller's searches (edge/kernel/listing.py)."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from edge.kernel.principal import Principal

__all__ = ["NO_ORIGIN", "Origin", "origin", "set_origin"]


@dataclass(frozen=True)
class Origin:
    client: str | None
    request_id: str | None
    principal: Principal | None = None  # who the request's guard found, if anyone


NO_ORIGIN = Origin(None, None)
_origin: ContextVar[Callable[[], Origin] | None] = ContextVar("audit_origin", default=None)


def set_origin(resolve: Callable[[], Origin]) -> None:
    """Where the running request came from, resolved only if an event is recorded."""
    _origin.set(resolve)


def origin() -> Origin:
    resolve = _origin.get()
    return resolve() if resolve is not None else NO_ORIGIN
