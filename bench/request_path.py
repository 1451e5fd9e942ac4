"""What each layer of edge's request path costs, and what the event loop changes.

1. In process: microseconds per request of each middleware layer, around a handler that
   returns a ready response (best of 5 rounds): the error layer, then the outer layer
   (request ID, security headers) with the access log off, and on (queued; the writer
   thread formats and writes to /dev/null).
2. Through wrk, `edge serve` variants side by side: event loop (uvloop, asyncio) x access
   log (on, off), on GET /v2/health and an org admin's GET /v2/groups/{id}; all four
   servers run at once and are measured in turn, twice, and the better round is shown.

Usage: python -m bench.request_path [--seconds S] [--connections C]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from bench import servers, world, wrk
from bench.wrk import Load, Target

VARIANTS = {
    "uvloop, access log on (default)": {},
    "uvloop, access log off": {"EDGE_ACCESS_LOG": "false"},
    "asyncio, access log on": {"EDGE_EVENT_LOOP": "asyncio"},
    "asyncio, access log off": {"EDGE_EVENT_LOOP": "asyncio", "EDGE_ACCESS_LOG": "false"},
}


def layer_costs(calls: int = 20_000) -> None:
    from api import errors, middleware
    from api.keys import SERVICES
    from edge.kernel import logs
    from edge.kernel.config import load
    from edge.pulse.counters import Counters

    async def ready(request: web.Request) -> web.StreamResponse:
        return web.Response(text="{}", content_type="application/json")

    def app_with(access_log: bool) -> web.Application:
        app = web.Application()
        config = load({"data_dir": tempfile.mkdtemp(), "access_log": str(access_log)})
        pulse = SimpleNamespace(counters=Counters())  # the pulse's request counter, as served
        app[SERVICES] = SimpleNamespace(config=config, pulse_sampler=pulse)  # type: ignore[assignment]
        return app

    def wrapped(*layers: Any) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        handler: Callable[[web.Request], Awaitable[web.StreamResponse]] = ready
        for layer in reversed(layers):
            handler = _bind(layer, handler)
        return handler

    sink = open(os.devnull, "w")  # noqa: SIM115 (kept open for the writer thread)
    logs.setup("text", "info", sink)
    cases = {
        "handler alone": (app_with(False), wrapped()),
        "+ error layer": (app_with(False), wrapped(errors.middleware())),
        "+ outer layer, access log off": (
            app_with(False),
            wrapped(middleware.framing(), errors.middleware()),
        ),
        "+ outer layer, access log on": (
            app_with(True),
            wrapped(middleware.framing(), errors.middleware()),
        ),
    }
    print(f"In process, per request, best of 5 x {calls:,} calls\n")
    for label, (app, handler) in cases.items():
        best = asyncio.run(_best(app, handler, calls))
        print(f"{label:34} {best * 1e6:7.2f} us")
    logs.shutdown()
    sink.close()


def _bind(layer: Any, inner: Any) -> Any:
    async def call(request: web.Request) -> web.StreamResponse:
        return await layer(request, inner)  # type: ignore[no-any-return]

    return call


async def _best(app: web.Application, handler: Any, calls: int) -> float:
    request = make_mocked_request("GET", "/v2/health?x=1", app=app)
    best = float("inf")
    for _ in range(5):
        began = time.perf_counter()
        for _ in range(calls):
            await handler(request)
        best = min(best, (time.perf_counter() - began) / calls)
    return best


def variants(load: Load, rounds: int = 2) -> None:
    """All variants run at once, measured in turn, `rounds` times; the best round counts
    (other work on the box only ever slows a run down)."""
    folder = Path(tempfile.mkdtemp(prefix="edge-bench-path-"))
    best: dict[tuple[str, str], wrk.Result] = {}
    with ExitStack() as stack:
        started = {
            label: stack.enter_context(servers.edge(folder / str(n), env))
            for n, (label, env) in enumerate(VARIANTS.items())
        }
        targets = {label: _targets(edge) for label, edge in started.items()}
        for _ in range(rounds):
            for label, edge in started.items():
                for name, target in targets[label].items():
                    result = wrk.run(target, load, edge.pid)
                    if (label, name) not in best or result.rps > best[label, name].rps:
                        best[label, name] = result
    print(
        f"\n`edge serve` variants, best of {rounds} interleaved rounds ({load.seconds:.0f} s per "
        f"run, wrk -t{load.threads} -c{load.connections}; CPU = server / wrk)\n"
    )
    print(f"{'variant':34} {'request':24} {'req/s':>9} {'p99 ms':>8} {'CPU srv/wrk':>11}")
    for (label, name), result in best.items():
        print(f"{label:34} {name:24} {result.rate()} {result.p99_ms:8.2f} {result.cpu():>11}")


def _targets(edge: servers.Server) -> dict[str, Target]:
    built = asyncio.run(world.build(edge.url, "path"))
    asyncio.run(world.grow(built, 10))
    return {
        "GET /v2/health": Target(f"{edge.url}/v2/health"),
        "GET /v2/groups/{id}": Target(
            f"{edge.url}/v2/groups/{built.groups[0]}", token=built.tokens["admin"]
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    wrk.ensure_installed()
    layer_costs()
    variants(Load(args.threads, args.connections, args.seconds))


if __name__ == "__main__":
    main()
