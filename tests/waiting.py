"""Waiting for what the server does on its own (a background flush, a thread's end, a
relay seeing a stream go): a deadline, not a count of short sleeps, so that a loaded
machine gets as long as it needs and a fast one pays nothing past the moment it holds.

The budget only keeps a broken server from hanging the suite; no assertion is about time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

BUDGET = 30.0  # seconds: a bound on failure, never the thing tested
STEP = 0.01  # seconds between two looks


async def eventually(condition: Callable[[], object], what: str, budget: float = BUDGET) -> None:
    """Until `condition()` is true; an AssertionError naming `what` after `budget`."""

    async def check() -> bool:
        return bool(condition())

    await eventually_async(check, what, budget)


async def eventually_async(
    check: Callable[[], Awaitable[bool]], what: str, budget: float = BUDGET
) -> None:
    """Until `await check()` is true (a condition that needs a request or a read to see)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + budget
    while not await check():
        if loop.time() >= deadline:
            raise AssertionError(f"never within {budget:g} s: {what}")
        await asyncio.sleep(STEP)
