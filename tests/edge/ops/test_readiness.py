"""edge/ops/readiness.py: READY=1 goes to the socket systemd names, once asked; without
NOTIFY_SOCKET nothing is sent, and a socket that cannot be reached is a warning."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from edge.ops import readiness


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify"))
    sock.settimeout(5)
    yield sock
    sock.close()


def test_ready_is_said_to_the_named_socket(
    listener: socket.socket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "notify"))
    readiness.ready()
    assert listener.recv(64) == b"READY=1"


def test_an_abstract_socket_is_named_with_an_at_sign(monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"edge-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        readiness.ready()
        assert sock.recv(64) == b"READY=1"


def test_nothing_is_sent_unless_systemd_asks(
    listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    readiness.ready()
    listener.setblocking(False)
    with pytest.raises(BlockingIOError):
        listener.recv(64)


def test_an_unreachable_socket_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "nobody"))
    with caplog.at_level(logging.WARNING, logger="edge.readiness"):
        readiness.ready()
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert "could not tell systemd" in caplog.text
