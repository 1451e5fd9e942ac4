"""The servers a benchmark runs against, each its own process on a free loopback port.

`edge` is the venv's `edge serve` on a temporary data folder, with its default settings
(access log on, written to a file in that folder) except for the ports and the shares
one client may hold (`UNBOUNDED`): a benchmark drives the server from one address, often
through one device's key, far past what one device would; a caller's env may set them
otherwise. `bare` is bench/bare_server.py.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PASSWORD = "bench-password-123"
MQTT_LISTENERS = ("MQTT", "MQTT_TLS", "MQTT_WS", "MQTT_WSS")
# One address's MQTT connections, one device's HTTP writes: lifted for the load generators.
UNBOUNDED = {
    "EDGE_MQTT_MAX_CONNECTIONS_PER_ADDRESS": "1000000",
    "EDGE_DEVICE_WRITE_RATE": "1000000",
    "EDGE_DEVICE_WRITE_BURST": "1000000",
}


@dataclass(frozen=True)
class Server:
    url: str
    pid: int


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def edge_command() -> list[str]:
    """`python -m edge` with this interpreter: run from the repository's root (as the
    benchmarks are), it serves this checkout's code, which the venv's `edge` script need
    not (an editable install points at the checkout it was made from)."""
    return [sys.executable, "-m", "edge"]


def mqtt_ports() -> dict[str, str]:
    """The broker's listeners on free ports, not the defaults (1883, 8883, 8083, 8084),
    which another server on the machine may hold; a caller's env may set them otherwise."""
    return {f"EDGE_{name}_PORT": str(free_port()) for name in MQTT_LISTENERS}


@contextmanager
def edge(folder: Path, env: dict[str, str] | None = None) -> Iterator[Server]:
    port = free_port()
    command = [*edge_command(), "serve", "--data-dir", str(folder / "data"), "--port", str(port)]
    settings = {"EDGE_ADMIN_PASSWORD": PASSWORD, **UNBOUNDED, **mqtt_ports(), **(env or {})}
    with _running(command, settings, folder / "edge.log", "/v2/health", port) as server:
        yield server


@contextmanager
def bare(folder: Path) -> Iterator[Server]:
    port = free_port()
    command = [sys.executable, "-m", "bench.bare_server", "--port", str(port)]
    command += ["--db", str(folder / "bare.db")]
    with _running(command, {}, folder / "bare.log", "/ok", port) as server:
        yield server


@contextmanager
def bare_data(folder: Path, database: Path) -> Iterator[Server]:
    """bench/bare_data_server.py on `database` (a copy of an edge database): aiohttp and
    SQLite with none of edge's work, the floor under a durable HTTP write."""
    port = free_port()
    command = [sys.executable, "-m", "bench.bare_data_server", "--port", str(port)]
    command += ["--db", str(database)]
    with _running(command, {}, folder / "bare-data.log", "/ping", port) as server:
        yield server


@contextmanager
def _running(
    command: list[str], env: dict[str, str], log: Path, health: str, port: int
) -> Iterator[Server]:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as sink:
        process = subprocess.Popen(
            command, env={**os.environ, **env}, stdout=sink, stderr=sink, cwd=_root()
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url + health, process)
        yield Server(url, process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)


def _wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the server exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} never became healthy")


def _root() -> Path:
    return Path(__file__).resolve().parents[1]
