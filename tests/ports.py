"""Free loopback ports for servers a test starts on a port of its choosing (the MQTT
listeners, a served process).

A port the kernel picks with `bind(port 0)` comes from the ephemeral range, the same range
every outgoing connection draws its local port from: between the probe closing and the server
binding, a client connection of the same run can take it (it did, once in a few thousand
runs, as `address already in use`). Ports below that range are never handed to outgoing
connections, so a probe there stays free until the server binds it. No port is handed out
twice in one run: a test that asks for five ports at once could otherwise get one twice
(its server then failed to bind its second listener), and a port given to an earlier
test's server may still be held while that server shuts down.

Under pytest-xdist each worker is a process of its own, with its own memory of what it
handed out: two workers could draw the same port between one's probe and its server's bind
(CI failed once on a port handed out twice). So the range is cut into one slice per worker
(`PYTEST_XDIST_WORKER` gwN of `PYTEST_XDIST_WORKER_COUNT`), and a worker draws only from
its own slice."""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

LOWEST = 10_000
_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_given: set[int] = set()  # ports handed out in this run (by this worker)


def _ephemeral_start() -> int:
    try:
        return int(_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def _worker() -> tuple[int, int]:
    """(this worker's index, the number of workers): (0, 1) outside pytest-xdist."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if not name.startswith("gw") or count < 1:
        return 0, 1
    return int(name[2:]) % count, count


def worker_range() -> range:
    """The ports this process may hand out: its worker's slice of those below the ephemeral
    range, the slices of two workers never overlapping."""
    top = _ephemeral_start()
    index, count = _worker()
    width = (top - LOWEST) // count
    start = LOWEST + index * width
    return range(start, start + width)


def free_port() -> int:
    """A loopback port of this worker's slice that nothing is bound to right now."""
    slice_ = worker_range()
    for _ in range(200):
        port = random.choice(slice_) if len(slice_) > 100 else 0
        if port in _given:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            found = int(probe.getsockname()[1])
        _given.add(found)
        return found
    raise RuntimeError("no free loopback port below the ephemeral range")
