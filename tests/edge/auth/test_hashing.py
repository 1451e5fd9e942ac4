"""Password hashing runs off the event loop, on its own pool, below the loop's priority."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from edge.auth import hashing


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


async def test_hash_and_verify_on_the_pool() -> None:
    stored = await hashing.hash("a long enough password")
    assert await hashing.verify(stored, "a long enough password")
    assert not await hashing.verify(stored, "another password")
    assert not await hashing.verify(None, "a long enough password")


@pytest.mark.skipif(sys.platform != "linux", reason="a priority per thread is Linux's")
def test_the_pool_runs_below_the_loop() -> None:
    mine = _nice()
    theirs = hashing._pool.submit(_nice).result(timeout=30)
    assert theirs == min(19, mine + hashing.NICENESS)
    assert _nice() == mine  # the caller's own thread keeps its priority


def test_the_pool_is_bounded() -> None:
    names = {hashing._pool.submit(lambda: threading.current_thread().name).result()}
    assert all(name.startswith("edge-password") for name in names)
    assert hashing._pool._max_workers == hashing.POOL_SIZE
