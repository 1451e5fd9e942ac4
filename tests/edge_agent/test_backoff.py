"""Reconnect delays (edge_agent/backoff.py): each between half and all of a step that
doubles up to the cap, starting over once a connection is accepted."""

from __future__ import annotations

import random

from edge_agent.backoff import Backoff


def test_waits_double_up_to_the_cap_with_jitter_and_start_over() -> None:
    backoff = Backoff(1.0, 8.0, _random=random.Random(7))
    waits = [backoff.next_wait() for _ in range(7)]
    for wait, step in zip(waits, [1, 2, 4, 8, 8, 8, 8], strict=True):
        assert step / 2 <= wait <= step
    assert len(set(waits[3:])) == 4  # drawn, not the same for every device of a fleet
    backoff.succeeded()
    assert backoff.next_wait() <= 1.0
