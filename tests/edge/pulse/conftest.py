"""The room tests' world (tests/edge/rooms.py), on a stopped clock: a sample's span and the
retention are read off the clock, which tests move with clock.advance."""

from collections.abc import Iterator

import pytest

from edge.kernel import clock
from tests.edge.rooms import room

__all__ = ["room"]


@pytest.fixture(autouse=True)
def stopped_clock(real_clock: None) -> Iterator[None]:
    clock.freeze()
    yield
