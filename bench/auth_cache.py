"""Token-authenticated GET with and without the verified-principal cache, in one run.

Three edge servers, each its own process and data folder on loopback: the cache off, the
cache on as shipped (auth epoch read on every use), and the cache on with a 1 s epoch
recheck. This process is the load generator. First, in this process, the cost of one
`Tokens.verify` call under each variant (no HTTP). Usage:
python -m bench.auth_cache [--requests N] [--concurrency C]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from bench.http_requests import PASSWORD, edge_token, free_port, getter, load, start, wait_ready

VARIANTS = {
    "off": "cache off (verify every time)",
    "on": "cache on (epoch every use)",
    "recheck1": "cache on (epoch every 1 s)",
}


def serve(data_dir: str, port: int, variant: str) -> None:
    """One edge server with the cache set up as `variant` says (runs until terminated)."""
    import os

    from aiohttp import web

    from edge.app import create_app, open_site
    from edge.auth.principal_cache import PrincipalCache
    from edge.kernel.config import load as load_config
    from storage import credentials

    config = load_config(
        {"data_dir": data_dir, "port": str(port), "log_level": "warning"}, dict(os.environ)
    )
    site = open_site(config)
    tokens = site.services.tokens
    db = site.services.db
    if variant == "off":
        tokens.cache = None
    elif variant == "recheck1":
        tokens.cache = PrincipalCache(lambda: db.read(credentials.auth_epoch), recheck=1.0)
    web.run_app(create_app(site), host="127.0.0.1", port=port, print=None)


async def verify_costs(calls: int = 20_000) -> None:
    """Microseconds per Tokens.verify of one staff token, best of three, per variant."""
    import time

    from edge.app import open_site
    from edge.auth.principal_cache import PrincipalCache
    from edge.auth.tokens import Lifetimes, Tokens
    from edge.kernel.config import load as load_config
    from storage import credentials, staff

    folder = tempfile.mkdtemp(prefix="edge-bench-verify-")
    site = open_site(load_config({"data_dir": folder}, {"EDGE_ADMIN_PASSWORD": PASSWORD}))
    db, keys = site.services.db, site.services.keys
    owner = db.read(staff.first)
    print(f"Tokens.verify, in process, best of 3 x {calls} calls")
    for variant, label in VARIANTS.items():
        tokens = Tokens(db, keys, cache=variant != "off")
        if variant == "recheck1":
            tokens.cache = PrincipalCache(lambda: db.read(credentials.auth_epoch), recheck=1.0)
        info = await tokens.open_session(
            "staff", owner["id"], org_id=None, project_id=None, lifetimes=Lifetimes()
        )
        token = str(info["access_token"])
        best = float("inf")
        for _ in range(3):
            began = time.perf_counter()
            for _ in range(calls):
                tokens.verify(token)
            best = min(best, (time.perf_counter() - began) / calls)
        print(f"{label:30} {best * 1e6:8.1f} us")
    print()
    db.close()


async def run(requests: int, concurrency: int) -> None:
    await verify_costs()
    folder = Path(tempfile.mkdtemp(prefix="edge-bench-auth-"))
    ports = {variant: free_port() for variant in VARIANTS}
    processes = [
        start(
            ["-m", "bench.auth_cache", "serve", str(folder / variant), str(port), variant],
            {"EDGE_ADMIN_PASSWORD": PASSWORD},
        )
        for variant, port in ports.items()
    ]
    try:
        calls = {}
        for variant, port in ports.items():
            url = f"http://127.0.0.1:{port}"
            await wait_ready(f"{url}/v2/health")
            token, org_id = await edge_token(url)
            calls[variant] = getter(f"{url}/v2/orgs/{org_id}", {"Authorization": f"Bearer {token}"})
        print(
            f"GET /v2/orgs/{{id}} with a bearer access token: {requests} requests per variant, "
            f"concurrency {concurrency}, loopback, one process per server\n"
        )
        print(f"{'variant':30} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
        for _round in range(2):  # interleaved rounds, so drift hits every variant alike
            for variant, call in calls.items():
                await load(call, min(500, requests), concurrency)  # warm-up
                rps, p50, p99 = await load(call, requests, concurrency)
                print(f"{VARIANTS[variant]:30} {rps:8.0f} {p50:8.2f} {p99:8.2f}")
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=15)


def main() -> None:
    import sys

    if len(sys.argv) == 5 and sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    asyncio.run(run(args.requests, args.concurrency))


if __name__ == "__main__":
    main()
