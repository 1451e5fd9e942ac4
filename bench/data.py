"""The data interface under wrk, side by side with a bare aiohttp + SQLite handler running
the same statements on a copy of the same database (bench/bare_data_server.py).

One edge data folder holds two groups: SMALL entries and BIG entries (10,000 and
1,000,000 by default). They are seeded through storage directly (signed exactly as the
server signs them: the documented fast path; the interface would take far longer), then
`edge serve` and the bare server start as their own processes, and wrk (Debian's package,
one thread on the other core) loads one server at a time:

- point GET and point PUT (durable) of random existing entries, in each group, edge and
  bare: req/s, p50, p99, and the server process's CPU during the run (about one core
  means wrk was not the limit);
- a `cascade` page by index filter and a `path_filter` scan reading 10,000 rows, in the
  big group: time per page, and the p99 of concurrent point GETs while they run, beside
  the p99 of the same point GETs alone.

The caller is a device with its API key (`Authorization: Bearer edk_...`, the spec's fast
path: data is what devices mostly call), granted read, write, update and delete on `/` of
both groups; `--caller token` measures an org admin's access token instead.
Usage: python -m bench.data [--small N] [--big N] [--seconds S] [--connections C]
[--caller key|token] [--keep DIR] (seed once into DIR, reuse it later: seeding a million
entries takes minutes)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import aiohttp

from bench.http_requests import free_port, start, wait_ready
from bench.rows import Row, command
from bench.servers import UNBOUNDED, mqtt_ports
from edge.app import open_site
from edge.data.signing import DataSigner
from edge.kernel import clock
from edge.kernel.config import load
from edge.kernel.principal import Principal
from storage import data as store
from storage import layout, staff
from storage import users as user_store
from storage.data import INDEX_FIELDS, DataEntry

PASSWORD = "bench-password-123"
EMAIL = "admin@bench.test"
ALIAS = "bench"
CHUNK = 20_000
BODY = '{"value": {"celsius": 21.5, "status": "ok"}, "unicode_1": "type07", "number_1": 7}'


@dataclass
class Seeded:
    folder: Path
    small: str
    big: str


@dataclass
class Result:
    rps: float
    p50: float
    p99: float
    cpu: float  # cores the server process used over the run
    errors: int
    cpu_per_request: float = 0.0  # server CPU microseconds per request

    @property
    def capacity(self) -> float:
        """Requests per second of one core at this CPU cost: a figure that holds even
        when other processes share the machine (throughput alone does not)."""
        return 1e6 / self.cpu_per_request if self.cpu_per_request else 0.0


def seed(folder: Path, small: int, big: int) -> Seeded:
    config = load(
        {"data_dir": str(folder), "log_level": "warning"}, {"EDGE_ADMIN_PASSWORD": PASSWORD}
    )
    site = open_site(config)
    services = site.services
    staff_id = services.db.read(staff.first)["id"]
    org_id = asyncio.run(
        services.orgs.create(
            Principal("staff", staff_id, None),
            {"name": "Bench", "alias": ALIAS},
            admin={"email": EMAIL, "password": PASSWORD},
        )
    )
    admin = services.db.read(lambda c: user_store.find_by_login(c, org_id, EMAIL))
    assert admin is not None
    owner = Principal("user", str(admin["id"]), None, org_id)
    groups = [
        asyncio.run(services.groups.create(owner, {"name": name, "create_own_access": False}))
        for name in ("small", "big")
    ]
    signer = DataSigner.load_or_create(folder)
    for group_id, count in zip(groups, (small, big), strict=True):
        began = time.perf_counter()
        fill(services.db, signer, group_id, count, owner.account_id)
        print(f"seeded {count:>9,} entries through storage in {time.perf_counter() - began:5.1f} s")
    services.db.close()
    return Seeded(folder, *groups)


def fill(db: object, signer: DataSigner, group_id: str, count: int, who: str) -> None:
    now = clock.now_iso()
    blank = dict.fromkeys(INDEX_FIELDS)

    def entry(i: int) -> DataEntry:
        made = DataEntry(
            group_id,
            f"/e/{i:07d}",
            {"seq": i, "celsius": 20 + i % 10},
            **{**blank, "unicode_1": f"type{i % 100:02d}", "number_1": i % 1000},
            created_by=who,
            created_date=now,
            last_updated_by=who,
            last_updated_date=now,
            updated_by_list=[who],
            updated_date_list=[now],
            revision=1,
            signature="",
        )
        return replace(made, signature=signer.sign(made))

    for first in range(0, count, CHUNK):
        rows = [entry(i) for i in range(first, min(count, first + CHUNK))]
        db.write_sync(lambda c, rows=rows: [store.save(c, r) for r in rows] and None)  # type: ignore[attr-defined]


async def sign_in(base: str) -> str:
    form = {"grant_type": "password", "username": EMAIL, "password": PASSWORD, "client_id": ALIAS}
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{base}/v2/auth/token", data=form) as response:
            return str((await response.json())["access_token"])


async def device_key(base: str, token: str, groups: tuple[str, ...]) -> str:
    """A device made by the org admin, with full data rights on `/` of each group: its key."""
    every = {"can_read": True, "can_write": True, "can_update": True, "can_delete": True}
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(headers=headers) as session:
        async with session.post(f"{base}/v2/devices", json={"name": "bench-device"}) as response:
            made = await response.json()
            assert response.status == 201, made
        device = made["device"]
        for group in groups:
            grant = {"data_paths": {"/": every}}
            path = f"{base}/v2/groups/{group}/access/{device['id']}"
            async with session.post(path, json=grant) as response:
                assert response.status in (200, 201), await response.text()
        return str(device["api_key"])


def script(
    folder: Path, name: str, prefix: str, count: int, method: str, token: str | None
) -> Path:
    """A wrk Lua script: requests to random existing entries of one group."""
    lines = ["math.randomseed(os.time())"]
    if token:
        lines.append(f'wrk.headers["Authorization"] = "Bearer {token}"')
    if method == "PUT":
        lines += [
            'wrk.method = "PUT"',
            f"wrk.body = '{BODY}'",
            'wrk.headers["Content-Type"] = "application/json"',
        ]
    lines += [
        "request = function()",
        f"  local path = string.format('{prefix}/e/%07d', math.random(0, {count - 1}))",
        f'  return wrk.format("{method}", path)',
        "end",
    ]
    path = folder / f"{name}.lua"
    path.write_text("\n".join(lines) + "\n")
    return path


def fixed(folder: Path, name: str, token: str) -> Path:
    path = folder / f"{name}.lua"
    path.write_text(f'wrk.headers["Authorization"] = "Bearer {token}"\n')
    return path


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk_command(url: str, lua: Path, seconds: int, connections: int) -> list[str]:
    return ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(lua), url]


def parse(output: str, cpu: float, cpu_seconds_used: float) -> Result:
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    count = int(re.search(r"(\d+) requests in", output).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return Result(
        rps,
        _percentile(output, "50"),
        _percentile(output, "99"),
        cpu,
        int(errors.group(1)) if errors else 0,
        cpu_seconds_used * 1e6 / max(count, 1),
    )


def _percentile(output: str, which: str) -> float:
    found = re.search(rf"^\s+{which}%\s+([\d.]+)(us|ms|s)\s*$", output, re.MULTILINE)
    assert found, output
    value, unit = float(found.group(1)), found.group(2)
    return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def load_run(url: str, lua: Path, seconds: int, connections: int, pid: int) -> Result:
    before, began = cpu_seconds(pid), time.monotonic()
    out = subprocess.run(
        wrk_command(url, lua, seconds, connections), capture_output=True, text=True, check=True
    ).stdout
    used = cpu_seconds(pid) - before
    return parse(out, used / (time.monotonic() - began), used)


def row(label: str, server: str, entries: str, r: Result) -> str:
    errors = f"  ({r.errors} errors)" if r.errors else ""
    figures = f"{r.rps:9.0f} {r.p50:8.2f} {r.p99:8.2f} {r.cpu * 100:7.0f}% {r.cpu_per_request:9.0f}"
    return f"{label:34} {server:5} {entries:>10} {figures}{errors}"


def seeded_in(work: Path, small: int, big: int) -> Seeded:
    """Seed a new folder, or reuse one a previous run kept (--keep)."""
    marker = work / "seeded.json"
    if marker.exists():
        found = json.loads(marker.read_text())
        if (found["small_count"], found["big_count"]) == (small, big):
            print(f"reusing the seeded folder {work}")
            return Seeded(work / "edge", found["small"], found["big"])
        shutil.rmtree(work / "edge")
    seeded = seed(work / "edge", small, big)
    facts = {"small": seeded.small, "big": seeded.big, "small_count": small, "big_count": big}
    marker.write_text(json.dumps(facts))
    shutil.copytree(work / "edge", work / "pristine")
    return seeded


def run(
    small: int, big: int, seconds: int, connections: int, keep: Path | None, caller: str = "key"
) -> list[Row]:
    work = keep or Path(tempfile.mkdtemp(prefix="edge-bench-data-"))
    work.mkdir(parents=True, exist_ok=True)
    if keep is not None and (work / "pristine").exists() and (work / "edge").exists():
        shutil.rmtree(work / "edge")  # start from the seeded state, not the last run's writes
        shutil.copytree(work / "pristine", work / "edge")
    seeded = seeded_in(work, small, big)
    bare_db = work / "bare.db"
    shutil.copy(layout.database_path(seeded.folder), bare_db)
    edge_port, bare_port = free_port(), free_port()
    env = {"EDGE_ADMIN_PASSWORD": PASSWORD, "EDGE_LOG_LEVEL": "warning", **mqtt_ports()}
    env |= UNBOUNDED  # wrk writes through one device's key: its pace is not measured here
    edge = start(
        ["-m", "edge", "serve", "--data-dir", str(seeded.folder), "--port", str(edge_port)], env
    )
    bare = start(
        ["-m", "bench.bare_data_server", "--port", str(bare_port), "--db", str(bare_db)], {}
    )
    edge_url, bare_url = f"http://127.0.0.1:{edge_port}", f"http://127.0.0.1:{bare_port}"
    try:
        asyncio.run(wait_ready(f"{edge_url}/v2/health"))
        asyncio.run(wait_ready(f"{bare_url}/ping"))
        token = asyncio.run(sign_in(edge_url))
        if caller == "key":
            groups = (seeded.small, seeded.big)
            token = asyncio.run(device_key(edge_url, token, groups))
        return measure(
            work, seeded, token, edge, bare, edge_url, bare_url, (small, big), seconds, connections
        )
    finally:
        for process in (edge, bare):
            process.terminate()
            process.wait(timeout=30)
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def measure(
    work: Path,
    seeded: Seeded,
    token: str,
    edge: subprocess.Popen[bytes],
    bare: subprocess.Popen[bytes],
    edge_url: str,
    bare_url: str,
    sizes: tuple[int, int],
    seconds: int,
    connections: int,
) -> list[Row]:
    print(
        f"\nwrk -t1 -c{connections} -d{seconds}s, loopback; caller: "
        + ("a device's API key" if token.startswith("edk_") else "an org admin's access token")
        + "; CPU = server process over the run\n"
    )
    head = f"{'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'CPU':>8} {'CPU us/req':>9}"
    print(f"{'scenario':34} {'srv':5} {'entries':>10} {head}")
    results: dict[tuple[str, str, int], Result] = {}
    for method in ("GET", "PUT"):
        for group, count in zip((seeded.small, seeded.big), sizes, strict=True):
            for server, proc, url, prefix, auth in (
                ("edge", edge, edge_url, f"/v2/groups/{group}/data", token),
                ("bare", bare, bare_url, f"/data/{group}", None),
            ):
                lua = script(work, f"{server}-{method}-{count}", prefix, count, method, auth)
                load_run(url, lua, 2, connections, proc.pid)  # warm-up
                found = results[(method, server, count)] = load_run(
                    url, lua, seconds, connections, proc.pid
                )
                label = f"point {method}" + (" (durable)" if method == "PUT" else "")
                print(row(label, server, f"{count:,}", found))
    print()
    print("ratios by measured req/s, and by CPU per request (capacity of one core)")
    rows = []
    for method, floor in (("GET", 0.6), ("PUT", 0.8)):
        for count in sizes:
            edge_r, bare_r = results[(method, "edge", count)], results[(method, "bare", count)]
            rows.append(_row(method, count, edge_r, bare_r, floor))
            by_rps, by_cpu = edge_r.rps / bare_r.rps, edge_r.capacity / bare_r.capacity
            print(
                f"{method} edge/bare at {count:>9,} entries: {by_rps:5.2f} req/s,"
                f" {by_cpu:5.2f} CPU  (target >= {floor})"
            )
        big, small = results[(method, "edge", sizes[1])], results[(method, "edge", sizes[0])]
        print(
            f"{method} edge {sizes[1]:,} / {sizes[0]:,} entries: {big.rps / small.rps:5.2f} req/s,"
            f" {big.capacity / small.capacity:5.2f} CPU  (target >= 0.8)"
        )
        rows.append(
            Row(
                f"data point {method}, edge at {sizes[1]:,} entries",
                big.rps,
                "req/s",
                f"edge at {sizes[0]:,} entries",
                small.rps,
                floor=0.8,
                load=f"srv {big.cpu * 100:.0f}%",
            )
        )
    return rows + scans(work, seeded, token, edge, edge_url, sizes, seconds)


def _row(method: str, count: int, edge_r: Result, bare_r: Result, floor: float) -> Row:
    """Edge beside bare; the load column holds both servers' CPU (wrk's is not read here:
    the bare server's higher rate with the same wrk shows wrk was not the limit)."""
    label = "GET" if method == "GET" else "PUT (durable)"
    return Row(
        f"data point {label} by API key, {count:,} entries, p99 {edge_r.p99:.1f} ms",
        edge_r.rps,
        "req/s",
        f"bare data server, p99 {bare_r.p99:.1f} ms",
        bare_r.rps,
        floor=floor,
        load=f"srv {edge_r.cpu * 100:.0f}%, bare {bare_r.cpu * 100:.0f}%; by CPU per request"
        f" {edge_r.capacity / bare_r.capacity:.2f}x",
    )


def scans(
    work: Path,
    seeded: Seeded,
    token: str,
    edge: subprocess.Popen[bytes],
    edge_url: str,
    sizes: tuple[int, int],
    seconds: int,
) -> list[Row]:
    """Each scan alone (one connection: its time per page), then again while point GETs
    run; the point GETs' p99 alone and beside the scan shows whether a scan blocks them."""
    base = f"{edge_url}/v2/groups/{seeded.big}/data/e"
    pages = {
        "cascade page, unicode_1 filter": f"{base}?cascade=true&unicode_1=type07&limit=100",
        "path_filter scan (10,000 read)": f"{base}?cascade=true&paths_only=true&limit=100"
        "&path_filter=x%24",
    }
    auth = fixed(work, "scan", token)
    point = script(
        work, "point-under-scan", f"/v2/groups/{seeded.big}/data", sizes[1], "GET", token
    )
    print(f"\nscans of the {sizes[1]:,}-entry group; point GETs at 8 connections beside them\n")
    head = f"{'ms/page':>8} {'pages/s':>8} {'point p99 alone':>16} {'point p99 beside':>17}"
    print(f"{'scan':34} {head}")
    rows = []
    for label, url in pages.items():
        alone = load_run(url, auth, seconds, 1, edge.pid)
        point_alone = load_run(edge_url, point, seconds, 8, edge.pid)
        scan = subprocess.Popen(
            wrk_command(url, auth, seconds + 2, 1), stdout=subprocess.PIPE, text=True
        )
        time.sleep(1)
        beside = load_run(edge_url, point, seconds, 8, edge.pid)
        scan.communicate()
        p99s = f"{point_alone.p99:13.2f} ms {beside.p99:14.2f} ms"
        print(
            f"{label:34} {alone.p50:8.1f} {alone.rps:8.1f} {p99s}"
            f"   (point req/s {point_alone.rps:.0f} alone, {beside.rps:.0f} beside)"
        )
        rows.append(
            Row(
                f"data point GET p99 beside a {label.split(',')[0].split(' (')[0]}"
                f" ({alone.p50:.0f} ms/page)",
                beside.p99,
                "ms",
                "point GET p99 alone",
                point_alone.p99,
                lower_is_better=True,
            )
        )
    return rows


def rows(quick: bool) -> list[Row]:
    """Point GET and PUT at 1,000 and 100,000 entries quick (10,000 and 1,000,000 full)."""
    small, big, seconds = (1_000, 100_000, 3) if quick else (10_000, 1_000_000, 8)
    run_line = command("bench.data", "--small", small, "--big", big, "--seconds", seconds)
    found = run(small, big, seconds, 32, None)
    return [replace(r, command=run_line) for r in found]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument(
        "--caller", choices=("key", "token"), default="key", help="a device's API key (default)"
    )
    parser.add_argument(
        "--keep", type=Path, help="keep the seeded folder here and reuse it on the next run"
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is required (Debian: apt-get install wrk; `make bench` installs it)")
    run(args.small, args.big, args.seconds, args.connections, args.keep, args.caller)


if __name__ == "__main__":
    main()
