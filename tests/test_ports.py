"""The tests' free loopback ports (tests/ports.py): below the ephemeral range, never one
that is bound, never the same one twice in a run."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests import ports


def test_no_port_is_handed_out_twice_in_a_run() -> None:
    given = [ports.free_port() for _ in range(500)]
    assert len(set(given)) == len(given)
    assert all(ports.LOWEST <= port < ports._ephemeral_start() for port in given)


def test_a_bound_port_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    held, spare = ports.free_port(), ports.free_port()
    monkeypatch.setattr(ports, "_given", set())  # both may be drawn again
    drawn: Iterator[int] = iter([held, spare])
    monkeypatch.setattr(ports.random, "randrange", lambda *_: next(drawn))
    with socket.socket() as server:
        server.bind(("127.0.0.1", held))
        server.listen()
        assert ports.free_port() == spare
