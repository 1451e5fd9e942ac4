"""The room tests' world (tests/edge/rooms.py)."""

from tests.edge.rooms import room

__all__ = ["room"]
