"""Password hashing runs off the event loop, on its own pool, below the loop's priority."""

from __future__ import annotations

import os
import subprocess
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


def test_edge_hashes_at_argon2ids_full_cost() -> None:
    """The suite hashes at Argon2id's smallest cost (tests/conftest.py): edge itself, in a
    fresh interpreter, hashes with 64 MiB, 3 passes and 4 lanes, and checks a password
    against an unknown account at that same cost (so timing does not tell)."""
    script = (
        "from edge.auth import hashing\n"
        "print(hashing.hash_sync('a long enough password'))\n"
        "print(hashing._DUMMY)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    stored, dummy = done.stdout.split()
    for made in (stored, dummy):
        assert made.startswith("$argon2id$v=19$m=65536,t=3,p=4$"), made


def test_the_suite_hashes_at_the_smallest_cost() -> None:
    """What tests/conftest.py changes, and only that: the algorithm stays Argon2id."""
    assert hashing.hash_sync("a long enough password").startswith("$argon2id$v=19$m=8,t=1,p=1$")
