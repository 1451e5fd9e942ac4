"""The executable beside `python -m edge`: size, start to first healthy response (cold and
warm), and idle memory. Usage: python -m bench.executable [--binary dist/edge] [--runs 5].

Cold: a new data folder (keys, migrations, first staff account are made). Warm: the same
folder again. For the single-file executable, the first run also unpacks it to a temp dir.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench import rows as out

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def mqtt_ports() -> list[str]:
    """The broker starts too (it is part of the start), on free ports."""
    return [
        a
        for n in ("mqtt", "mqtt-tls", "mqtt-ws", "mqtt-wss")
        for a in (f"--{n}-port", str(free_port()))
    ]


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def start_once(command: list[str], data: Path) -> tuple[float, int]:
    """Seconds from exec to the first 200 from /v2/health, and RSS in KiB once idle."""
    port = free_port()
    env = {**os.environ, "EDGE_ADMIN_PASSWORD": "bench-password-123", "EDGE_LOG_LEVEL": "warning"}
    began = time.perf_counter()
    process = subprocess.Popen(
        [*command, "serve", "--data-dir", str(data), "--port", str(port), *mqtt_ports()],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not healthy(f"http://127.0.0.1:{port}/v2/health"):
            if process.poll() is not None or time.perf_counter() - began > 60:
                raise RuntimeError(f"{command} did not start")
            time.sleep(0.01)
        elapsed = time.perf_counter() - began
        time.sleep(1.0)  # idle
        return elapsed, rss_kib(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)


def rss_kib(pid: int) -> int:
    """Resident memory of the process and its children (the executable's bootloader forks)."""
    total = 0
    for line in subprocess.run(
        ["ps", "-o", "pid=,ppid=,rss=", "-A"], capture_output=True, text=True, check=True
    ).stdout.splitlines():
        child, parent, rss = (int(x) for x in line.split())
        if child == pid or parent == pid:
            total += rss
    return total


def measure(label: str, command: list[str], runs: int) -> tuple[float, float, float]:
    cold, warm, memory = [], [], []
    for _ in range(runs):
        folder = Path(tempfile.mkdtemp(prefix="edge-start-"))
        seconds, _ = start_once(command, folder / "data")
        cold.append(seconds)
        seconds, kib = start_once(command, folder / "data")
        warm.append(seconds)
        memory.append(kib)
        shutil.rmtree(folder)
    medians = (
        statistics.median(cold) * 1000,
        statistics.median(warm) * 1000,
        statistics.median(memory) / 1024,
    )
    print(f"{label:22} {medians[0]:9.0f} {medians[1]:9.0f} {medians[2]:10.1f}")
    return medians


def rows(quick: bool) -> list[out.Row]:
    """The executable's start and memory beside `python -m edge` (3 runs quick, 5 full)."""
    binary, runs = ROOT / "dist" / "edge", 3 if quick else 5
    if not binary.exists():
        raise out.Skipped("dist/edge not built (`make binary`)")
    line = out.command("bench.executable", "--runs", runs)
    ours = measure("dist/edge", [str(binary)], runs)
    venv = measure("python -m edge (venv)", [sys.executable, "-m", "edge"], runs)
    names = ("cold start to healthy", "warm start to healthy", "idle RSS")
    return [
        out.Row(
            f"executable: {name}",
            mine,
            "ms" if "start" in name else "MiB",
            f"python -m edge, {name}",
            theirs,
            lower_is_better=True,
            command=line,
        )
        for name, mine, theirs in zip(names, ours, venv, strict=True)
    ]


def size_of(path: Path) -> float:
    return path.stat().st_size / 1024 / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binary", type=Path, default=ROOT / "dist" / "edge")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not args.binary.exists():
        sys.exit(f"{args.binary} not found: run `make binary` first")
    venv = ROOT / ".venv" / "lib"
    venv_mb = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file()) / 1024 / 1024
    print(
        f"size: executable {size_of(args.binary):.1f} MiB; the venv it replaces {venv_mb:.0f} MiB"
        " (with test tools)\n"
    )
    print(f"{'median of ' + str(args.runs):22} {'cold ms':>9} {'warm ms':>9} {'idle MiB':>10}")
    measure("dist/edge", [str(args.binary)], args.runs)
    measure("python -m edge (venv)", [sys.executable, "-m", "edge"], args.runs)


if __name__ == "__main__":
    main()
