"""One way for a test to count what a function was asked: the storage reads a request
makes, for the tests that say how many it may make."""

from __future__ import annotations

from typing import Any

import pytest


def calls_of(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, arg: int = 1) -> list[Any]:
    """`owner.name` wrapped for the rest of the test; the list it returns grows by each
    call's argument at `arg` (by default the one after the connection)."""
    original = getattr(owner, name)
    seen: list[Any] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        seen.append(args[arg])
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return seen
