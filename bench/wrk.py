"""wrk, the native load generator: one timed run against one URL, with the server's CPU sampled.

A Python client saturates before edge does, so its figures measure the client. wrk (C, one
thread by default here) leaves the server a core of its own on a 2-core box. Each run reports
the server's CPU time over the run as a share of one core (near 100% means the server, not
wrk, was the bottleneck) and wrk's own CPU share beside it.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Load:
    threads: int = 1
    connections: int = 64
    seconds: float = 5.0
    warmup: float = 1.0


# A request path slower than this runs with SLOW_CONNECTIONS, so requests finish inside the
# run instead of timing out (the server is saturated either way; only latency differs).
# The warm-up that tells it runs with the full connections: with few, a durable write waits
# on every fsync alone and looks slow although many at once share one commit.
SLOW_RPS = 200
SLOW_CONNECTIONS = 4


@dataclass(frozen=True)
class Target:
    url: str
    method: str = "GET"
    token: str | None = None
    body: str | None = None


@dataclass(frozen=True)
class Result:
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    server_cpu: float  # share of one core over the run
    wrk_cpu: float
    connections: int

    def cpu(self) -> str:
        return f"{self.server_cpu * 100:3.0f}%/{self.wrk_cpu * 100:3.0f}%"

    def rate(self, width: int = 9, digits: int = 0) -> str:
        """Requests per second; a run with fewer connections than asked is marked `*`."""
        mark = "*" if self.connections == SLOW_CONNECTIONS else " "
        return f"{self.rps:{width - 1},.{digits}f}{mark}"


def ensure_installed() -> str:
    found = shutil.which("wrk")
    if found is None:
        raise SystemExit("wrk not found: `make bench` installs it (apt-get install wrk)")
    return found


def run(target: Target, load: Load, server_pid: int, *, settle: bool = True) -> Result:
    """Warm up (which also tells a slow path), then one measured run once the server is idle.

    Non-2xx answers count as errors. `settle=False` for a server kept busy on purpose (a
    background load): it would never fall idle, so neither run waits for it to.
    """
    with tempfile.TemporaryDirectory(prefix="edge-wrk-") as folder:
        script = Path(folder) / "request.lua"
        script.write_text(_script(target))
        connections = load.connections
        if load.warmup > 0:
            probe = _wrk(target.url, script, load.threads, load.connections, load.warmup)
            if probe[0] / (probe[1] / 1e6) < SLOW_RPS:
                connections = SLOW_CONNECTIONS
            if settle:
                wait_idle(server_pid)
        before = _cpu_seconds(server_pid)
        children_before = _children_cpu()
        began = time.monotonic()
        fields = _wrk(target.url, script, load.threads, connections, load.seconds)
        wall = time.monotonic() - began
        server_cpu = (_cpu_seconds(server_pid) - before) / wall
        wrk_cpu = (_children_cpu() - children_before) / wall
        if settle:
            wait_idle(server_pid)  # requests wrk left in flight finish before the next run
    requests, duration_us, *errors, p50, p99 = fields
    return Result(
        rps=requests / (duration_us / 1e6),
        p50_ms=p50 / 1000,
        p99_ms=p99 / 1000,
        errors=int(sum(errors)),
        server_cpu=server_cpu,
        wrk_cpu=wrk_cpu,
        connections=connections,
    )


def wait_idle(pid: int, timeout: float = 120.0) -> None:
    """Until the server used under 10% of a core over 0.2 s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = _cpu_seconds(pid)
        time.sleep(0.2)
        if _cpu_seconds(pid) - before < 0.02:
            return


def _wrk(url: str, script: Path, threads: int, connections: int, seconds: float) -> list[float]:
    command = [
        ensure_installed(),
        f"-t{threads}",
        f"-c{max(threads, connections)}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "30s",
        "-s",
        str(script),
        url,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    for line in done.stdout.splitlines():
        if line.startswith("EDGE-BENCH "):
            return [float(x) for x in line.split()[1:]]
    raise RuntimeError(f"wrk printed no summary: {done.stdout}\n{done.stderr}")


def _cpu_seconds(pid: int) -> float:
    """User + system time of a process and all its threads, from /proc/<pid>/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    """CPU of reaped children: wrk is the only child reaped while it runs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _lua(text: str) -> str:
    if "]==]" in text:
        raise ValueError("text cannot be quoted for Lua")
    return f"[==[{text}]==]"


def _script(target: Target) -> str:
    lines = [f"wrk.method = {_lua(target.method)}"]
    if target.token:
        lines.append(f'wrk.headers["Authorization"] = {_lua("Bearer " + target.token)}')
    if target.body is not None:
        lines.append('wrk.headers["Content-Type"] = "application/json"')
        lines.append(f"wrk.body = {_lua(target.body)}")
    lines.append(
        """
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("EDGE-BENCH %d %d %d %d %d %d %d %d %d\\n",
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""
    )
    return "\n".join(lines)
