"""The room tests' world (tests/edge/rooms.py), on a stopped clock: billing counts by UTC
day, and a day must not close in the middle of a test (tests move it with clock.advance)."""

from collections.abc import Iterator

import pytest

from edge.kernel import clock
from tests.edge.rooms import room

__all__ = ["room"]


@pytest.fixture(autouse=True)
def stopped_clock(real_clock: None) -> Iterator[None]:
    clock.freeze()
    yield
