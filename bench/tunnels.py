"""Device tunnels: what the relay costs, beside a direct loopback TCP copy of the same bytes.

Everything runs on this machine as it would on a site: `edge serve` (its own process, with
the MQTT broker), `edge tunnel agent` (the device's side) and `edge tunnel connect` (the
technician's side) as processes of their own, and the services behind the agent in this
process (a sink that counts what it got, an echo). Each figure is measured on the same run
for both paths, the direct one first:

- throughput of one stream: SIZE bytes written, half-closed, and the sink's count back;
- the round trip of a small request (64 bytes) over one held connection: median and p99;
- the server's RSS at rest with the tunnel open, and its peak while 20 streams each carry
  STREAM_MIB at once (sampled every 5 ms; the helpers' peaks too).

Run: .venv/bin/python -m bench.tunnels [--size-mib 256] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import struct
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp

from bench import rows as out
from bench import servers
from bench.files import machine, peak_rss, rss_mib
from bench.world import _call, build

MIB = 1024 * 1024
CHUNK = 256 * 1024
SMALL = 64
ROUND_TRIPS = 500
STREAMS = 20
STREAM_MIB = 16


async def sink(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Counts what arrives until the sender half-closes, then answers the count."""
    total = 0
    while data := await reader.read(CHUNK):
        total += len(data)
    writer.write(struct.pack("!Q", total))
    await writer.drain()
    writer.close()


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(CHUNK):
        writer.write(data)
        await writer.drain()
    writer.close()


async def copy(port: int, size: int) -> float:
    """Seconds to push `size` bytes to the sink on `port` and get its count back."""
    block = os.urandom(CHUNK)
    began = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    left = size
    while left > 0:
        writer.write(block[: min(left, CHUNK)])
        await writer.drain()
        left -= CHUNK
    writer.write_eof()
    (count,) = struct.unpack("!Q", await reader.readexactly(8))
    writer.close()
    assert count == size, (count, size)
    return time.perf_counter() - began


async def round_trips(port: int) -> list[float]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    message, times = os.urandom(SMALL), []
    for _ in range(ROUND_TRIPS):
        began = time.perf_counter()
        writer.write(message)
        await writer.drain()
        await reader.readexactly(SMALL)
        times.append(time.perf_counter() - began)
    writer.close()
    return times


class Helper:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, *args: str, env: dict[str, str], wait_for: str) -> tuple[Helper, str]:
        process = await asyncio.create_subprocess_exec(
            *servers.edge_command(),
            "tunnel",
            *args,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, **env},
        )
        assert process.stdout is not None
        async with asyncio.timeout(30):
            while True:
                line = (await process.stdout.readline()).decode()
                if not line:
                    raise RuntimeError(f"edge tunnel {args[0]} ended")
                if wait_for in line:
                    return cls(process), line

    async def stop(self) -> None:
        self.process.terminate()
        await self.process.wait()


async def device(base: str, admin: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session:
        made = await _call(session, base, "POST", "/v2/devices", admin, {"name": "bench-pump"})
    return dict(made["device"])


async def open_tunnel(base: str, admin: str, device_id: str) -> dict[str, Any]:
    body = {"services": ["SINK", "ECHO"], "timeout": 60}
    async with aiohttp.ClientSession() as session:
        made = await _call(session, base, "POST", f"/v2/devices/{device_id}/tunnels", admin, body)
    return dict(made["tunnel"])


def rate(size: int, seconds: float) -> str:
    return f"{size / MIB / seconds:9.0f} MiB/s"


async def run(size_mib: int, rounds: int) -> list[out.Row]:
    work = Path(tempfile.mkdtemp(prefix="edge-tunnels-bench-"))
    mqtt_port = servers.free_port()
    env = {
        "EDGE_MQTT_PORT": str(mqtt_port),
        "EDGE_MQTT_TLS_PORT": "0",
        "EDGE_MQTT_WS_PORT": "0",
        "EDGE_MQTT_WSS_PORT": "0",
        "EDGE_TUNNEL_MAX_STREAMS": str(STREAMS + 2),  # the default is 16
    }
    helpers: list[Helper] = []
    sink_server = await asyncio.start_server(sink, "127.0.0.1", 0)
    echo_server = await asyncio.start_server(echo, "127.0.0.1", 0)
    ports = {
        n: s.sockets[0].getsockname()[1] for n, s in (("SINK", sink_server), ("ECHO", echo_server))
    }
    with ExitStack() as stack:
        server = stack.enter_context(servers.edge(work, env))
        try:
            world = await build(server.url, "tunnels")
            admin = world.tokens["admin"]
            made = await device(server.url, admin)
            agent, _ = await Helper.start(
                "agent",
                "--server",
                server.url,
                "--device-id",
                made["id"],
                "--root-scope",
                made["root_scope"],
                "--mqtt",
                f"mqtt://127.0.0.1:{mqtt_port}",
                *(f"--service={name}={port}" for name, port in ports.items()),
                env={"EDGE_DEVICE_API_KEY": made["api_key"]},
                wait_for="waiting on",
            )
            helpers.append(agent)
            tunnel = await open_tunnel(server.url, admin, made["id"])
            through: dict[str, int] = {}
            for name in ports:
                helper, line = await Helper.start(
                    "connect",
                    "--server",
                    server.url,
                    "--tunnel",
                    tunnel["uuid"],
                    "--service",
                    name,
                    "--listen",
                    "127.0.0.1:0",
                    env={"EDGE_TUNNEL_TOKEN": tunnel["client_access_token"]},
                    wait_for=" on ",
                )
                helpers.append(helper)
                through[name] = int(line.rsplit(":", 1)[1])
            found = await report(server.pid, helpers, ports, through, size_mib * MIB, rounds)
        finally:
            for helper in helpers:
                await helper.stop()
            sink_server.close()
            echo_server.close()
    shutil.rmtree(work, ignore_errors=True)
    return found


async def report(
    pid: int,
    helpers: list[Helper],
    direct: dict[str, int],
    tunnel: dict[str, int],
    size: int,
    rounds: int,
) -> list[out.Row]:
    print(f"command: {Path(sys.executable).name} -m bench.tunnels {' '.join(sys.argv[1:])}")
    print(f"machine before: {machine()}")
    await copy(tunnel["SINK"], MIB)  # the first stream warms both helpers and the server
    best = {
        "direct": min([await copy(direct["SINK"], size) for _ in range(rounds)]),
        "tunnel": min([await copy(tunnel["SINK"], size) for _ in range(rounds)]),
    }
    print(f"\none stream, {size // MIB} MiB, best of {rounds}")
    print(f"{'path':30} {'seconds':>8} {'throughput':>15} {'ratio':>7}")
    for path, seconds in best.items():
        ratio = best["direct"] / seconds
        print(f"{path:30} {seconds:8.2f} {rate(size, seconds):>15} {ratio:6.2f}x")

    trips = {
        "direct": await round_trips(direct["ECHO"]),
        "tunnel": await round_trips(tunnel["ECHO"]),
    }
    print(f"\nround trip of {SMALL} bytes, {ROUND_TRIPS} in a row on one connection")
    print(f"{'path':30} {'median ms':>10} {'p99 ms':>8}")
    for path, times in trips.items():
        p99 = statistics.quantiles(times, n=100)[98]
        print(f"{path:30} {statistics.median(times) * 1000:10.3f} {p99 * 1000:8.3f}")
    added = statistics.median(trips["tunnel"]) - statistics.median(trips["direct"])
    print(f"added by the tunnel (median): {added * 1000:.3f} ms")

    at_rest = rss_mib(pid)
    peaks = [peak_rss(pid), *(peak_rss(h.process.pid) for h in helpers)]
    with ExitStack() as stack:
        sampled = [stack.enter_context(p) for p in peaks]
        began = time.perf_counter()
        await asyncio.gather(*(copy(tunnel["SINK"], STREAM_MIB * MIB) for _ in range(STREAMS)))
        seconds = time.perf_counter() - began
    print(
        f"\n{STREAMS} streams at once, {STREAM_MIB} MiB each, through the tunnel:"
        f" {rate(STREAMS * STREAM_MIB * MIB, seconds).strip()} together"
    )
    print(f"{'process':30} {'RSS at rest MiB':>16} {'peak MiB':>9}")
    print(f"{'edge serve':30} {at_rest:16.1f} {sampled[0][0]:9.1f}")
    for name, peak in zip(("agent", "connect SINK", "connect ECHO"), sampled[1:], strict=True):
        print(f"{'edge tunnel ' + name:30} {'':16} {peak[0]:9.1f}")
    print(f"machine after: {machine()}")
    medians = {path: statistics.median(times) * 1000 for path, times in trips.items()}
    return [
        out.Row(
            f"tunnel: one stream of {size // MIB} MiB",
            size / MIB / best["tunnel"],
            "MiB/s",
            "direct loopback TCP",
            size / MIB / best["direct"],
        ),
        out.Row(
            f"tunnel: round trip of {SMALL} bytes (median)",
            medians["tunnel"],
            "ms",
            "direct loopback TCP",
            medians["direct"],
            lower_is_better=True,
        ),
        out.Row(
            f"tunnel: edge serve peak RSS, {STREAMS} streams x {STREAM_MIB} MiB at once",
            sampled[0][0],
            "MiB",
            "edge serve at rest, tunnel open",
            at_rest,
            lower_is_better=True,
        ),
    ]


def rows(quick: bool) -> list[out.Row]:
    size, rounds = (32, 1) if quick else (256, 3)
    line = out.command("bench.tunnels", "--size-mib", size, "--rounds", rounds)
    return [replace(r, command=line) for r in asyncio.run(run(size, rounds))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(run(args.size_mib, args.rounds))


if __name__ == "__main__":
    main()
