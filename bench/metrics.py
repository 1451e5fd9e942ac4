"""What counting requests for GET /metrics costs: token GETs with metrics on and off.

Usage: python -m bench.metrics [--seconds S] [--connections C] [--rounds R]

Two edge servers on the same kind of data folder, one with `metrics = false` (nothing
counted, /metrics a 404) and one with the default (every request counted by route
template and status). An org admin's token GET /v2/groups/{id} is run with wrk against
each in turn, R rounds alternating, so drift on a shared machine hits both alike; the
medians are compared. One scrape of /metrics is timed at the end (what a Prometheus
scrape costs the server). Each run prints the server's CPU share: near 100% means the
server was saturated, not wrk.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench import servers, world, wrk
from bench.wrk import Load, Result, Target


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _scrape_ms(url: str, token: str, times: int = 20) -> float:
    request = urllib.request.Request(url + "/metrics", headers={"Authorization": f"Bearer {token}"})
    began = time.perf_counter()
    for _ in range(times):
        with urllib.request.urlopen(request) as response:
            response.read()
    return (time.perf_counter() - began) / times * 1000


def _this_checkout() -> list[str]:
    """`python -m edge` from this checkout (servers run from its root), whatever the
    installed `edge` script points at: the code measured is the code here."""
    return [sys.executable, "-m", "edge"]


def _counting_us(rounds: int = 200_000) -> float:
    """What counting one request costs in the middleware, in microseconds: the route's
    template, a clock read and `RequestStats.observe` (the same calls as api/middleware.py)."""
    from edge.ops.metrics import RequestStats

    class Resource:
        canonical = "/v2/groups/{group_id}"

    stats, resource = RequestStats(), Resource()
    began = time.perf_counter()
    for _ in range(rounds):
        started = time.perf_counter()
        stats.observe("GET", resource.canonical, 200, time.perf_counter() - started)
    return (time.perf_counter() - began) / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    wrk.ensure_installed()
    servers.edge_command = _this_checkout
    load = Load(1, args.connections, args.seconds)
    folder = Path(tempfile.mkdtemp(prefix="edge-bench-metrics-"))
    log(f"data folders and server logs: {folder}")
    runs: dict[str, list[Result]] = {"off": [], "on": []}
    token = "scrape-" + "x" * 32
    # Two servers side by side: no MQTT listeners (they would both claim 1883).
    quiet = {f"EDGE_MQTT_{p}PORT": "0" for p in ("", "TLS_", "WS_", "WSS_")}
    with (
        servers.edge(folder / "off", {**quiet, "EDGE_METRICS": "false"}) as off,
        servers.edge(folder / "on", {**quiet, "EDGE_METRICS_TOKEN": token}) as on,
    ):
        targets = {}
        for name, server in (("off", off), ("on", on)):
            built = asyncio.run(world.build(server.url, "metrics"))
            asyncio.run(world.grow(built, 10))
            url = f"{server.url}/v2/groups/{built.groups[0]}"
            targets[name] = (Target(url, token=built.tokens["admin"]), server.pid)
        for i in range(args.rounds):
            for name in ("off", "on") if i % 2 == 0 else ("on", "off"):
                target, pid = targets[name]
                result = wrk.run(target, load, pid)
                runs[name].append(result)
                log(f"  round {i + 1} metrics {name:3} {result.rate()} req/s CPU {result.cpu()}")
        scrape = _scrape_ms(on.url, token)
    medians = {name: statistics.median(r.rps for r in results) for name, results in runs.items()}
    # Requests per second of server CPU: what a request costs the server, which holds even
    # when other work on a shared machine keeps the server from a core of its own.
    per_cpu = {
        name: statistics.median(r.rps / r.server_cpu for r in results if r.server_cpu)
        for name, results in runs.items()
    }
    cost = 1 - medians["on"] / medians["off"]
    cpu_cost = 1 - per_cpu["on"] / per_cpu["off"]
    print(
        f"\nToken GET /v2/groups/{{id}} (org admin), wrk -t1 -c{args.connections}, "
        f"{args.seconds:.0f} s x {args.rounds} rounds each, alternating; median req/s\n"
    )
    for name in ("off", "on"):
        rates = " ".join(f"{r.rps:,.0f} ({r.server_cpu * 100:.0f}%)" for r in runs[name])
        print(
            f"metrics {name:3}  median {medians[name]:8,.0f} req/s, "
            f"{per_cpu[name]:8,.0f} req per CPU-second   runs (server CPU): {rates}"
        )
    print(f"\ncost of counting: {cost * 100:.1f}% of throughput (median req/s),")
    print(f"                  {cpu_cost * 100:.1f}% of requests per server CPU-second")
    counting = _counting_us()
    request_us = 1e6 / per_cpu["off"]
    print(
        f"counting one request: {counting:.2f} us of the {request_us:.0f} us of server CPU "
        f"a request costs with metrics off: {counting / request_us * 100:.1f}%"
    )
    print(f"one scrape of /metrics: {scrape:.1f} ms")


if __name__ == "__main__":
    main()
