"""The tests' free loopback ports (tests/ports.py): below the ephemeral range, never one
that is bound, never the same one twice in a run, not even by two pytest-xdist workers."""

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
    monkeypatch.setattr(ports.random, "choice", lambda _: next(drawn))
    with socket.socket() as server:
        server.bind(("127.0.0.1", held))
        server.listen()
        assert ports.free_port() == spare


def _drawn_as(monkeypatch: pytest.MonkeyPatch, worker: str, count: int) -> set[int]:
    """The ports a fresh worker `worker` of `count` hands out, 300 of them."""
    monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", str(count))
    monkeypatch.setattr(ports, "_given", set())  # each worker remembers only its own
    return {ports.free_port() for _ in range(300)}


def test_two_xdist_workers_never_hand_out_the_same_port(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker is a process with its own memory of the ports it gave: only disjoint
    slices keep two of them from giving one port to two servers at once."""
    first, second = (_drawn_as(monkeypatch, f"gw{n}", 2) for n in range(2))
    assert max(first) < min(second)
    assert all(ports.LOWEST <= port < ports._ephemeral_start() for port in first | second)


def test_each_worker_has_a_slice_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    slices = []
    for n in range(8):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{n}")
        monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "8")
        slices.append(set(ports.worker_range()))
    assert all(len(s) > 1000 for s in slices)
    assert len(set().union(*slices)) == sum(len(s) for s in slices)  # no port in two
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT")
    assert ports.worker_range() == range(ports.LOWEST, ports._ephemeral_start())
