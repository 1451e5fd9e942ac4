"""HTTP throughput and latency: edge beside a bare aiohttp+SQLite handler, in one run.

Both servers run as their own processes on loopback; this process is the load generator
(a fixed number of requests at a fixed concurrency). Usage: python -m bench.http_requests
[--requests N] [--concurrency C].

For quick checks only: this Python client saturates before edge does, so its ratios are
too kind. The quoted figures come from wrk: python -m bench.requests_wrk.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp

PASSWORD = "bench-password-123"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, *args],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def wait_ready(url: str) -> None:
    async with aiohttp.ClientSession() as session:
        for _ in range(200):
            try:
                async with session.get(url) as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
    raise RuntimeError(f"{url} never became ready")


Call = Callable[[aiohttp.ClientSession], Awaitable[int]]


async def load(call: Call, requests: int, concurrency: int) -> tuple[float, float, float]:
    """Requests per second, p50 and p99 latency in milliseconds."""
    latencies: list[float] = []
    queue = iter(range(requests))

    async def worker(session: aiohttp.ClientSession) -> None:
        for _ in queue:
            began = time.perf_counter()
            status = await call(session)
            latencies.append((time.perf_counter() - began) * 1000)
            assert status < 400, status

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        began = time.perf_counter()
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        elapsed = time.perf_counter() - began
    quantiles = statistics.quantiles(latencies, n=100)
    return requests / elapsed, quantiles[49], quantiles[98]


def getter(url: str, headers: dict[str, str] | None = None) -> Call:
    async def call(session: aiohttp.ClientSession) -> int:
        async with session.get(url, headers=headers) as response:
            await response.read()
            return response.status

    return call


def poster(url: str, body: dict[str, object], headers: dict[str, str] | None = None) -> Call:
    async def call(session: aiohttp.ClientSession) -> int:
        async with session.post(url, json=body, headers=headers) as response:
            await response.read()
            return response.status

    return call


async def edge_token(base: str) -> tuple[str, str]:
    async with aiohttp.ClientSession() as session:
        form = {"grant_type": "password", "username": "admin", "password": PASSWORD}
        async with session.post(f"{base}/v2/auth/token", data=form) as response:
            token = (await response.json())["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        async with session.post(f"{base}/v2/orgs", json={"name": "Bench"}, headers=headers) as r:
            org_id = (await r.json())["org"]["id"]
    return token, org_id


async def bare_item(base: str) -> str:
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{base}/items", json={"name": "Bench"}) as response:
            return str((await response.json())["item"]["id"])


async def run(requests: int, concurrency: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="edge-bench-"))
    edge_port, bare_port = free_port(), free_port()
    edge = start(
        [
            "-m",
            "edge",
            "serve",
            "--data-dir",
            str(folder / "edge"),
            "--port",
            str(edge_port),
            "--log-level",
            "warning",
        ],
        {"EDGE_ADMIN_PASSWORD": PASSWORD, "EDGE_MQTT_PORT": "0", "EDGE_MQTT_TLS_PORT": "0"},
    )
    bare = start(
        ["-m", "bench.bare_server", "--port", str(bare_port), "--db", str(folder / "bare.db")], {}
    )
    edge_url, bare_url = f"http://127.0.0.1:{edge_port}", f"http://127.0.0.1:{bare_port}"
    try:
        await wait_ready(f"{edge_url}/v2/health")
        await wait_ready(f"{bare_url}/ok")
        token, org_id = await edge_token(edge_url)
        item_id = await bare_item(bare_url)
        auth = {"Authorization": f"Bearer {token}"}
        scenarios = [
            (
                "health / ok (no auth)",
                getter(f"{edge_url}/v2/health"),
                getter(f"{bare_url}/ok"),
            ),
            (
                "point read, token-authenticated",
                getter(f"{edge_url}/v2/orgs/{org_id}", auth),
                getter(f"{bare_url}/items/{item_id}"),
            ),
            (
                "durable write (create)",
                poster(f"{edge_url}/v2/orgs", {"name": "Bench"}, auth),
                poster(f"{bare_url}/items", {"name": "Bench"}),
            ),
        ]
        print(
            f"{requests} requests per scenario, concurrency {concurrency}, loopback, "
            f"one process per server\n"
        )
        print(f"{'scenario':34} {'server':6} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
        for name, edge_call, bare_call in scenarios:
            for label, call in (("edge", edge_call), ("bare", bare_call)):
                await load(call, min(200, requests), concurrency)  # warm-up
                rps, p50, p99 = await load(call, requests, concurrency)
                print(f"{name:34} {label:6} {rps:8.0f} {p50:8.2f} {p99:8.2f}")
    finally:
        for process in (edge, bare):
            process.terminate()
            process.wait(timeout=15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    asyncio.run(run(args.requests, args.concurrency))


if __name__ == "__main__":
    main()
