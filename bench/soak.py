"""The soak: a bounded mixed load on the real server for a while, with a verdict.

`edge serve` runs in its own process (default settings, the broker on a free port) and
carries, all at once and each at a fixed rate (well under what it can serve, so that
latency measures the server rather than a queue):

- an HTTP mix through wrk: a device's data reads and writes with its API key; an org
  admin's and a plain user's token reads of groups, users and a group list, and the admin's
  data writes (RATE req/s in all, over 1,000 entries);
- sign-ins (`POST /v2/auth/token` with a password) through a second wrk;
- file transfers: a presigned upload and a checked download of a 256 KiB file a second;
- MQTT: DEVICES devices each publishing a QoS 1 message a second, and one more device
  subscribed to all their topics;
- a device tunnel (`edge tunnel agent` and `edge tunnel connect` as processes): a 1 MiB
  stream and 10 round trips a second.

Every 10 s it prints throughput, p50/p99 latency, errors, the server's RSS and CPU, and
the load generators' CPU. It fails (exit code 1) on any error (an HTTP status other than
2xx, a socket error or timeout, a failed or lost MQTT message or a dropped MQTT connection,
a failed or corrupted transfer or stream, a server that is not healthy at the end), or
when over the second half of the run:

- the server's RSS grows by more than RSS_LIMIT (5%) of its level at the half; or
- the HTTP mix's p99 grows by more than P99_LIMIT (50%) of its median over the half, and
  by more than P99_FLOOR_MS (5 ms): a p99 of a few milliseconds moves by that much with
  whatever else the machine runs, which is not a trend of the server's.

Growth is the slope of a Theil-Sen line (the median of the slopes between every pair of
reports: one stray report cannot tilt it) times the half's length.

Usage: python -m bench.soak [--seconds 600] (or SOAK_SECONDS) [--rate 400] [--devices 300]
[--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

import aiohttp

from bench import rows as out
from bench import servers, soak_load, tunnels, world
from bench.mqtt_load import Login
from bench.soak_load import Operations, Request, Segment

RSS_LIMIT = 0.05
P99_LIMIT = 0.50
P99_FLOOR_MS = 5.0
ENTRIES = 1000
SCOPES = {"/soak": {"can_publish": True, "can_subscribe": True}}
CONNECTIONS = 32  # of the HTTP mix; sign-ins take SIGN_IN_CONNECTIONS
SIGN_IN_CONNECTIONS = 4
ctx = mp.get_context("spawn")


@dataclass
class Site:
    base: str
    admin: str
    user: str
    user_id: str
    target_id: str
    groups: list[str]
    data_group: str
    key: str
    root: str = ""
    devices: list[Login] = field(default_factory=list)


@dataclass
class Report:
    """One interval: what each load did, and the server's state at its end."""

    at: float  # seconds since the load began
    http_rps: float
    http_p50: float
    http_p99: float
    signin_rps: float
    signin_p99: float
    mqtt_in: float  # PUBACKed publishes per second
    mqtt_out: float  # deliveries to the listener per second
    files_ops: float
    files_p99: float
    tunnel_mib: float
    trip_p99: float
    errors: int
    rss_mib: float  # the least sampled over the interval: what a leak raises
    rss_peak_mib: float  # the most: with password checks in flight (64 MiB each)
    server_cpu: float  # share of one core
    load_cpu: float  # wrk, the MQTT processes and this process, in cores


@dataclass
class Verdict:
    errors: int
    rss_growth: float  # share of the RSS at the half
    p99_growth: float  # share of the half's median p99
    p99_growth_ms: float
    failures: list[str]

    @property
    def passed(self) -> bool:
        return not self.failures


# The site


async def build(base: str, devices: int) -> Site:
    built = await world.build(base, "soak")
    await world.grow(built, 10)
    admin = built.tokens["admin"]
    async with aiohttp.ClientSession() as session:
        group = await world._created_id(
            session, base, admin, "/v2/groups", {"name": "Soak data"}, "group"
        )
        await world._gather(
            8,
            (
                world._call(
                    session,
                    base,
                    "PUT",
                    f"/v2/groups/{group}/data/e/{i:04d}",
                    admin,
                    {"value": {"seq": i, "celsius": 21.5}},
                )
                for i in range(ENTRIES)
            ),
        )
        key = await _data_device(session, base, admin, group)
        site = Site(
            base,
            admin,
            built.tokens["user"],
            built.user_id,
            built.target_id,
            built.groups,
            group,
            key,
        )
        made = await world._gather(
            8,
            (
                world._call(
                    session,
                    base,
                    "POST",
                    "/v2/devices",
                    admin,
                    {"name": f"soak-{i}", "iot_scopes": SCOPES},
                )
                for i in range(devices + 1)
            ),
        )
    site.root = made[0]["device"]["root_scope"]
    site.devices = [
        Login(d["device"]["id"], d["device"]["id"], d["device"]["api_key"]) for d in made
    ]
    return site


async def _data_device(session: aiohttp.ClientSession, base: str, admin: str, group: str) -> str:
    made = await world._call(session, base, "POST", "/v2/devices", admin, {"name": "soak-data"})
    every = {"can_read": True, "can_write": True, "can_update": True, "can_delete": True}
    grant = {"data_paths": {"/": every}}
    device = made["device"]
    await world._call(
        session, base, "POST", f"/v2/groups/{group}/access/{device['id']}", admin, grant
    )
    return str(device["api_key"])


def http_mix(site: Site) -> list[Request]:
    data = f"/v2/groups/{site.data_group}/data/e/%04d"
    body = json.dumps({"value": {"celsius": 22.5, "status": "ok"}, "unicode_1": "soak"})
    return [
        Request(40, "GET", data, site.key, spread=ENTRIES),
        Request(10, "PUT", data, site.key, body, spread=ENTRIES),
        Request(15, "GET", f"/v2/groups/{site.groups[0]}", site.admin),
        Request(10, "GET", f"/v2/groups/{site.groups[1]}", site.user),
        Request(10, "GET", f"/v2/users/{site.target_id}", site.admin),
        Request(10, "GET", "/v2/groups?limit=10", site.user),
        Request(5, "PUT", data, site.admin, body, spread=ENTRIES),
    ]


def sign_in(site: Site) -> list[Request]:
    form = (
        f"grant_type=password&username=user%40soak.test&password={world.MEMBER_PASSWORD}"
        "&client_id=soak"
    )
    return [Request(1, "POST", "/v2/auth/token", "", form, form=True)]


# The run


async def soak(args: argparse.Namespace, folder: Path) -> tuple[list[Report], Verdict]:
    mqtt_port = servers.free_port()
    env = {
        "EDGE_MQTT_PORT": str(mqtt_port),
        "EDGE_MQTT_TLS_PORT": "0",
        "EDGE_MQTT_WS_PORT": "0",
        "EDGE_MQTT_WSS_PORT": "0",
    }
    with servers.edge(folder, env) as server:
        site = await build(server.url, args.devices)
        log(f"site ready: {args.devices} MQTT devices, {ENTRIES} data entries")
        tunnel = await Tunnel.open(site, mqtt_port, args.seconds)
        try:
            reports, failures, extra = await drive(args, folder, server, site, mqtt_port, tunnel)
        finally:
            await tunnel.close()
        if not healthy(server.url):
            failures.append("the server was not healthy at the end")
            extra += 1
    return reports, judge(reports, args.seconds, failures, extra)


class Tunnel:
    """A device's agent (with a sink and an echo behind it) and a technician's connectors."""

    def __init__(self) -> None:
        self.helpers: list[tunnels.Helper] = []
        self.servers: list[asyncio.Server] = []
        self.ports: dict[str, int] = {}

    @classmethod
    async def open(cls, site: Site, mqtt_port: int, seconds: float) -> Tunnel:
        self = cls()
        for name, handler in (("SINK", tunnels.sink), ("ECHO", tunnels.echo)):
            self.servers.append(await asyncio.start_server(handler, "127.0.0.1", 0))
            self.ports[name] = self.servers[-1].sockets[0].getsockname()[1]
        made = await tunnels.device(site.base, site.admin)
        agent, _ = await tunnels.Helper.start(
            "agent",
            "--server",
            site.base,
            "--device-id",
            made["id"],
            "--root-scope",
            made["root_scope"],
            "--mqtt",
            f"mqtt://127.0.0.1:{mqtt_port}",
            *(f"--service={name}={port}" for name, port in self.ports.items()),
            env={"EDGE_DEVICE_API_KEY": made["api_key"]},
            wait_for="waiting on",
        )
        self.helpers.append(agent)
        minutes = min(720, int(seconds // 60) + 10)
        body = {"services": list(self.ports), "timeout": minutes}
        async with aiohttp.ClientSession() as session:
            path = f"/v2/devices/{made['id']}/tunnels"
            opened = (await world._call(session, site.base, "POST", path, site.admin, body))[
                "tunnel"
            ]
        for name in list(self.ports):
            helper, line = await tunnels.Helper.start(
                "connect",
                "--server",
                site.base,
                "--tunnel",
                opened["uuid"],
                "--service",
                name,
                "--listen",
                "127.0.0.1:0",
                env={"EDGE_TUNNEL_TOKEN": opened["client_access_token"]},
                wait_for=" on ",
            )
            self.helpers.append(helper)
            self.ports[name] = int(line.rsplit(":", 1)[1])
        return self

    async def close(self) -> None:
        for helper in self.helpers:
            await helper.stop()
        for server in self.servers:
            server.close()


class Devices:
    """The MQTT devices' processes and the listener's, with their shared counters."""

    def __init__(self, port: int, site: Site, count: int, rate: float) -> None:
        groups = [list(range(1, count + 1))[i::2] for i in range(2)]
        self.counts = ctx.RawArray("q", soak_load.SLOTS * (len(groups) + 1))
        self.ready, self.stop, self.stop_listener = ctx.Semaphore(0), ctx.Event(), ctx.Event()
        listen = f"{site.root}/soak/#"
        self.procs = [
            ctx.Process(
                target=soak_load.listener,
                args=(
                    port,
                    site.devices[0],
                    listen,
                    self.counts,
                    0,
                    self.ready,
                    self.stop_listener,
                ),
            )
        ]
        for slot, members in enumerate(groups, 1):
            logins = [site.devices[i] for i in members]
            topics = [f"{site.root}/soak/d{i}" for i in members]
            self.procs.append(
                ctx.Process(
                    target=soak_load.devices,
                    args=(port, logins, topics, rate, self.counts, slot, self.ready, self.stop),
                )
            )

    def start(self) -> None:
        for proc in self.procs:
            proc.start()
        for _ in self.procs:
            if not self.ready.acquire(timeout=120):
                raise RuntimeError("the MQTT devices did not connect")

    def totals(self) -> tuple[int, int, int]:
        """(acknowledged publishes, deliveries to the listener, failures and drops)."""
        n = soak_load.SLOTS
        rows = [list(self.counts[i * n : (i + 1) * n]) for i in range(len(self.procs))]
        acked = sum(r[soak_load.ACKED] for r in rows[1:])
        bad = sum(r[soak_load.FAILED] + r[soak_load.DROPPED] for r in rows)
        return acked, rows[0][soak_load.ACKED], bad

    def cpu(self) -> float:
        return sum(cpu_seconds(p.pid) for p in self.procs if p.pid and p.is_alive())

    def finish(self) -> int:
        """Stop publishing, let the last messages arrive; the number lost."""
        self.stop.set()
        for proc in self.procs[1:]:
            proc.join(30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            acked, received, _ = self.totals()
            if received >= acked:
                break
            time.sleep(0.1)
        self.stop_listener.set()
        self.procs[0].join(10)
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
        acked, received, _ = self.totals()
        return max(0, acked - received)


async def drive(
    args: argparse.Namespace,
    folder: Path,
    server: servers.Server,
    site: Site,
    mqtt_port: int,
    tunnel: Tunnel,
) -> tuple[list[Report], list[str], int]:
    mix, signin = folder / "mix.lua", folder / "signin.lua"
    mix.write_text(soak_load.script(http_mix(site), CONNECTIONS, args.rate))
    signin.write_text(soak_load.script(sign_in(site), SIGN_IN_CONNECTIONS, args.sign_ins))
    devices = Devices(mqtt_port, site, args.devices, args.mqtt_rate)
    await asyncio.to_thread(devices.start)
    stop = asyncio.Event()
    ops = {k: Operations() for k in ("upload", "download", "stream", "round trips")}
    background = [
        asyncio.create_task(
            soak_load.file_transfers(
                site.base,
                site.admin,
                f"/v2/groups/{site.data_group}/files",
                args.file_kib * 1024,
                args.files,
                stop,
                ops,
            )
        ),
        asyncio.create_task(
            soak_load.tunnel_streams(
                tunnel.ports["SINK"],
                tunnel.ports["ECHO"],
                args.stream_kib * 1024,
                args.streams,
                stop,
                ops,
            )
        ),
    ]
    failures: list[str] = []
    reports: list[Report] = []
    log(header())
    began = time.monotonic()
    meter = Meter(server.pid, devices, args.stream_kib / 1024)
    background.append(asyncio.create_task(meter.sample_rss(stop)))
    try:
        while (left := args.seconds - (time.monotonic() - began)) > 0.5:
            seconds = max(1, round(min(args.interval, left)))
            runs = [
                soak_load.start_wrk(site.base, lua, c, seconds)
                for lua, c in ((mix, CONNECTIONS), (signin, SIGN_IN_CONNECTIONS))
            ]
            http, sign = await asyncio.gather(
                *(asyncio.to_thread(soak_load.finish_wrk, r) for r in runs)
            )
            report = meter.report(time.monotonic() - began, http, sign, ops, failures)
            reports.append(report)
            log(line(report))
    finally:
        stop.set()
        await asyncio.gather(*background, return_exceptions=True)
        lost = await asyncio.to_thread(devices.finish)
    if lost:
        failures.append(f"MQTT: {lost} acknowledged messages never reached the listener")
    _, _, bad = devices.totals()
    late = bad - meter.mqtt[2]  # failures or dropped connections after the last report
    if late:
        failures.append(f"MQTT: {late} failures or dropped connections while stopping")
    return reports, failures, lost + late


class Meter:
    """Reads the counters and the server's /proc at the end of each interval."""

    def __init__(self, pid: int, devices: Devices, stream_mib: float) -> None:
        self.pid, self.devices, self.stream_mib = pid, devices, stream_mib
        self.last = time.monotonic()
        self.server = cpu_seconds(pid)
        self.load = self._load_cpu()
        self.mqtt = devices.totals()
        self.rss: list[float] = []

    async def sample_rss(self, stop: asyncio.Event) -> None:
        """Every 0.5 s: an instant's RSS swings with the password checks then running."""
        while not stop.is_set():
            self.rss.append(rss_mib(self.pid))
            try:
                await asyncio.wait_for(stop.wait(), 0.5)
            except TimeoutError:
                pass

    def _load_cpu(self) -> float:
        mine = resource.getrusage(resource.RUSAGE_SELF)
        wrk = resource.getrusage(resource.RUSAGE_CHILDREN)  # wrk is the only reaped child
        return mine.ru_utime + mine.ru_stime + wrk.ru_utime + wrk.ru_stime + self.devices.cpu()

    def report(
        self,
        at: float,
        http: Segment,
        sign: Segment,
        ops: dict[str, Operations],
        failures: list[str],
    ) -> Report:
        now = time.monotonic()
        span, self.last = now - self.last, now
        server, load = cpu_seconds(self.pid), self._load_cpu()
        server_cpu, load_cpu = (server - self.server) / span, (load - self.load) / span
        self.server, self.load = server, load
        mqtt = self.devices.totals()
        acked, received, bad = (a - b for a, b in zip(mqtt, self.mqtt, strict=True))
        self.mqtt = mqtt
        taken = {k: v.take() for k, v in ops.items()}
        new = [f for _, fails in taken.values() for f in fails]
        for failure in new[:3]:
            log(f"  failed: {failure}")
        failures.extend(new)
        if http.errors or sign.errors:
            failures.append(f"HTTP at {at:.0f} s: {http.errors} mix errors, {sign.errors} sign-in")
        if bad:
            failures.append(f"MQTT at {at:.0f} s: {bad} failed publishes or dropped connections")
        files = taken["upload"][0] + taken["download"][0]
        rss, self.rss = self.rss or [rss_mib(self.pid)], []
        streams = taken["stream"][0]
        return Report(
            at=at,
            http_rps=http.rps,
            http_p50=http.p50_ms,
            http_p99=http.p99_ms,
            signin_rps=sign.rps,
            signin_p99=sign.p99_ms,
            mqtt_in=acked / span,
            mqtt_out=received / span,
            files_ops=len(files) / span,
            files_p99=p99_ms(files),
            tunnel_mib=len(streams) * self.stream_mib / span,
            trip_p99=p99_ms(taken["round trips"][0]),
            errors=http.errors + sign.errors + bad + len(new),
            rss_mib=min(rss),
            rss_peak_mib=max(rss),
            server_cpu=server_cpu,
            load_cpu=load_cpu,
        )


def p99_ms(times: list[float]) -> float:
    if len(times) < 2:
        return times[0] * 1000 if times else 0.0
    return statistics.quantiles(times, n=100)[98] * 1000


# The verdict


def theil_sen(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(slope, intercept) of the Theil-Sen line through the points."""
    slopes = [
        (y2 - y1) / (x2 - x1)
        for i, (x1, y1) in enumerate(points)
        for x2, y2 in points[i + 1 :]
        if x2 != x1
    ]
    slope = statistics.median(slopes) if slopes else 0.0
    intercept = statistics.median(y - slope * x for x, y in points)
    return slope, intercept


def judge(reports: list[Report], seconds: float, failures: list[str], extra: int) -> Verdict:
    """`extra`: errors found after the last report (lost messages, an unhealthy end)."""
    errors = sum(r.errors for r in reports) + extra
    half = [r for r in reports if r.at >= seconds / 2 - 1]
    rss_growth = p99_growth = p99_ms_growth = 0.0
    if len(half) >= 2:
        start, end = half[0].at, half[-1].at
        slope, intercept = theil_sen([(r.at, r.rss_mib) for r in half])
        rss_growth = slope * (end - start) / (slope * start + intercept)
        slope, _ = theil_sen([(r.at, r.http_p99) for r in half])
        p99_ms_growth = slope * (end - start)
        p99_growth = p99_ms_growth / statistics.median(r.http_p99 for r in half)
    else:
        failures.append("too short: the second half holds fewer than 2 reports")
    if rss_growth > RSS_LIMIT:
        failures.append(f"RSS grew {rss_growth:.1%} over the second half (limit {RSS_LIMIT:.0%})")
    if p99_growth > P99_LIMIT and p99_ms_growth > P99_FLOOR_MS:
        failures.append(
            f"p99 grew {p99_growth:.0%} ({p99_ms_growth:.1f} ms) over the second half"
            f" (limit {P99_LIMIT:.0%} and {P99_FLOOR_MS:.0f} ms)"
        )
    return Verdict(errors, rss_growth, p99_growth, p99_ms_growth, failures)


# Printing and /proc


def log(text: str) -> None:
    print(text, flush=True)


def header() -> str:
    return (
        f"{'t s':>5} {'HTTP/s':>7} {'p50 ms':>7} {'p99 ms':>7} | {'login/s':>7} {'p99':>6} |"
        f" {'MQTT in/s':>9} {'out/s':>6} | {'files/s':>7} {'p99':>6} | {'tun MiB/s':>9}"
        f" {'rt p99':>6} | {'errors':>6} | {'RSS MiB':>7} {'peak':>5} | {'CPU srv':>7} {'load':>5}"
    )


def line(r: Report) -> str:
    return (
        f"{r.at:5.0f} {r.http_rps:7.0f} {r.http_p50:7.2f} {r.http_p99:7.2f} |"
        f" {r.signin_rps:7.2f} {r.signin_p99:6.0f} | {r.mqtt_in:9.0f} {r.mqtt_out:6.0f} |"
        f" {r.files_ops:7.2f} {r.files_p99:6.0f} | {r.tunnel_mib:9.2f} {r.trip_p99:6.1f} |"
        f" {r.errors:6d} | {r.rss_mib:7.1f} {r.rss_peak_mib:5.0f} | {r.server_cpu:6.0%}"
        f" {r.load_cpu:5.0%}"
    )


def summary(reports: list[Report], verdict: Verdict) -> str:
    def mean(name: str) -> float:
        return statistics.fmean(getattr(r, name) for r in reports) if reports else 0.0

    lines = [
        f"\nmeans: HTTP {mean('http_rps'):.0f} req/s (p99 {mean('http_p99'):.1f} ms),"
        f" sign-ins {mean('signin_rps'):.2f}/s, MQTT {mean('mqtt_in'):.0f} msg/s in and"
        f" {mean('mqtt_out'):.0f} out, files {mean('files_ops'):.2f} ops/s, tunnel"
        f" {mean('tunnel_mib'):.2f} MiB/s; server CPU {mean('server_cpu'):.0%} of a core,"
        f" load generators {mean('load_cpu'):.0%}",
        f"second half: RSS {verdict.rss_growth:+.1%} (limit {RSS_LIMIT:.0%}), HTTP p99"
        f" {verdict.p99_growth:+.0%} / {verdict.p99_growth_ms:+.1f} ms (limit {P99_LIMIT:.0%}"
        f" and {P99_FLOOR_MS:.0f} ms); errors {verdict.errors}",
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end",
    ]
    lines += [f"FAILED: {f}" for f in verdict.failures[:10]]
    lines.append("PASSED" if verdict.passed else "FAILED")
    return "\n".join(lines)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1]) / 1024
    return 0.0


def healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/v2/health", timeout=10) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default = float(os.environ.get("SOAK_SECONDS", "600"))
    parser.add_argument("--seconds", type=float, default=default, help="length (SOAK_SECONDS)")
    parser.add_argument("--interval", type=float, default=10.0, help="seconds per report")
    parser.add_argument("--rate", type=float, default=400.0, help="HTTP mix, req/s")
    parser.add_argument("--sign-ins", type=float, default=1.0, help="sign-ins per second")
    parser.add_argument("--devices", type=int, default=300, help="MQTT devices")
    parser.add_argument("--mqtt-rate", type=float, default=1.0, help="messages/s per device")
    parser.add_argument("--files", type=float, default=1.0, help="uploads (and downloads)/s")
    parser.add_argument("--file-kib", type=int, default=256)
    parser.add_argument("--streams", type=float, default=1.0, help="tunnel streams per second")
    parser.add_argument("--stream-kib", type=int, default=1024)
    parser.add_argument("--json", type=Path, help="also write the reports and verdict here")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> tuple[list[Report], Verdict]:
    with tempfile.TemporaryDirectory(prefix="edge-soak-") as folder:
        log(
            f"soak: {args.seconds:.0f} s; HTTP mix {args.rate:.0f} req/s,"
            f" {args.sign_ins} sign-in/s,"
            f" {args.devices} MQTT devices x {args.mqtt_rate} msg/s, {args.files} file upload"
            f" + download/s of {args.file_kib} KiB, {args.streams} tunnel stream/s of"
            f" {args.stream_kib} KiB; {os.cpu_count()} cores, load average"
            f" {os.getloadavg()[0]:.2f} before"
        )
        reports, verdict = asyncio.run(soak(args, Path(folder)))
    log(summary(reports, verdict))
    if args.json:
        facts = {"reports": [asdict(r) for r in reports], "verdict": asdict(verdict)}
        args.json.write_text(json.dumps(facts, indent=1))
    return reports, verdict


def rows(quick: bool) -> list[out.Row]:
    """A one-minute soak at the default mix, for the report (quick or not)."""
    reports, verdict = run(parse(["--seconds", "60"]))
    line = out.command("bench.soak", "--seconds", 60)

    def mean(name: str) -> float:
        return statistics.fmean(getattr(r, name) for r in reports) if reports else 0.0

    mix = (
        f"soak 60 s: HTTP mix, p50 {mean('http_p50'):.1f} / p99 {mean('http_p99'):.1f} ms"
        f" (beside {mean('signin_rps'):.1f} sign-ins/s, {mean('mqtt_in'):.0f} MQTT msg/s,"
        f" {mean('files_ops'):.1f} file transfers/s, {mean('tunnel_mib'):.1f} MiB/s tunnel)"
    )
    load = out.cpu(mean("server_cpu"), mean("load_cpu"))
    return [
        out.Row(mix, mean("http_rps"), "req/s", load=load, command=line),
        out.Row("soak: errors", verdict.errors, "", ceiling=0, command=line),
        out.Row(
            "soak: server RSS growth over the second half (least RSS of each 10 s)",
            verdict.rss_growth * 100,
            "%",
            ceiling=RSS_LIMIT * 100,
            command=line,
        ),
        out.Row(
            f"soak: HTTP p99 growth over the second half ({verdict.p99_growth_ms:+.1f} ms;"
            f" only growth past {P99_FLOOR_MS:g} ms counts)",
            verdict.p99_growth * 100,
            "%",
            ceiling=P99_LIMIT * 100,
            command=line,
            passed=not (verdict.p99_growth > P99_LIMIT and verdict.p99_growth_ms > P99_FLOOR_MS),
        ),
    ]


def main() -> None:
    _, verdict = run(parse())
    sys.exit(0 if verdict.passed else 1)


if __name__ == "__main__":
    main()
