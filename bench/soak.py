"""The soak: a bounded mixed load on the real server for a while, with a verdict.

`edge serve` runs in its own process (default settings, the broker on a free port) and
carries, all at once and each at a fixed rate (well under what it can serve, so that
latency measures the server rather than a queue):

- an HTTP mix through wrk: a device's data reads and writes with its API key; an org
  admin's and a plain user's token reads of groups, users and a group list, and the admin's
  data writes (RATE req/s in all, over 1,000 entries);
- sign-ins (`POST /v2/auth/token` with a password) through a second wrk;
- file transfers: a presigned upload and a checked download of a 256 KiB file a second;
- MQTT: DEVICES devices each publishing a QoS 1 message a second, and four more devices
  subscribed (QoS 1) to a quarter of their topics each;
- a device tunnel (`edge tunnel agent` and `edge tunnel connect` as processes): a 1 MiB
  stream and 10 round trips a second.

The site is set up first through the interface (bench/soak_site.py); the load generators
are bench/soak_load.py. Every 10 s it prints throughput, p50/p99 latency, errors, the
server's RSS (the least and the most sampled every 0.5 s: a password check holds 64 MiB
while it runs) and CPU, the load generators' CPU, and how busy the machine was (the share
of time some task waited for a CPU), and the size of the database's write-ahead log (which
grows for as long as no checkpoint runs). It fails (exit code 1) on any error (an HTTP
status other than 2xx, a socket error or timeout, a failed or lost MQTT message or a
dropped MQTT connection, a failed or corrupted transfer or stream, a server that is not
healthy at the end), or
when over the second half of the run:

- the server's RSS (the least of each report) grows by more than RSS_LIMIT (5%) of its
  level at the half: a healthy server's levels off once its caches are warm; or
- the HTTP mix's p99 grows by more than P99_LIMIT (50%) of its median over the half, and
  by more than P99_FLOOR_MS (5 ms): a p99 of a few milliseconds moves by that much with
  whatever else the machine runs, which is not a trend of the server's. On a machine
  whose other work keeps it busy the p99 is the scheduler's: re-run on a quiet one.

Growth is the slope of a Theil-Sen line (the median of the slopes between every pair of
reports: one stray report cannot tilt it) times the half's length.

With --memory-reports DIR the server writes its memory report (docs/operating.md) at the
start, every minute and at the end, and the reports are copied to DIR; --trace-frames N
turns on allocation tracing, so that they show what grew by traceback (tracing slows the
server: such a run's latencies are not the server's).

Usage: python -m bench.soak [--seconds 600] (or SOAK_SECONDS) [--rate 400] [--devices 300]
[--json FILE] [--memory-reports DIR [--trace-frames N]]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from bench import rows as out
from bench import servers, soak_load
from bench.soak_load import Operations, Request, Segment
from bench.soak_site import ENTRIES, Devices, Site, Tunnel, build, cpu_seconds, http_mix, sign_in

RSS_LIMIT = 0.05
P99_LIMIT = 0.50
P99_FLOOR_MS = 5.0
REPORTS_PER_MEMORY_REPORT = 6  # with --memory-reports: one a minute
CONNECTIONS = 32  # of the HTTP mix; sign-ins take SIGN_IN_CONNECTIONS
SIGN_IN_CONNECTIONS = 4


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
    cpu_pressure: float  # % of the last 10 s some task waited for a CPU (/proc/pressure)
    wal_mib: float = 0.0  # the database's write-ahead log: it grows while no checkpoint runs


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


# The run


async def soak(args: argparse.Namespace, folder: Path) -> tuple[list[Report], Verdict]:
    mqtt_port = servers.free_port()
    env = {
        "EDGE_MQTT_PORT": str(mqtt_port),
        "EDGE_MQTT_TLS_PORT": "0",
        "EDGE_MQTT_WS_PORT": "0",
        "EDGE_MQTT_WSS_PORT": "0",
        "EDGE_MEMORY_TRACE_FRAMES": str(args.trace_frames),
    }
    with servers.edge(folder, env) as server, memory_reports(args, folder, server):
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


async def drive(
    args: argparse.Namespace,
    folder: Path,
    server: servers.Server,
    site: Site,
    mqtt_port: int,
    tunnel: Tunnel,
) -> tuple[list[Report], list[str], int]:
    scripts = write_scripts(args, folder, site)
    devices = Devices(mqtt_port, site, args.devices, args.mqtt_rate)
    await asyncio.to_thread(devices.start)
    stop = asyncio.Event()
    ops = {k: Operations() for k in ("upload", "download", "stream", "round trips")}
    background = transfers(args, site, tunnel, stop, ops)
    failures: list[str] = []
    reports: list[Report] = []
    log(header())
    began = time.monotonic()
    wal = folder / "data" / "edge.db-wal"
    meter = Meter(server.pid, devices, args.stream_kib / 1024, wal)
    background.append(asyncio.create_task(meter.sample_rss(stop)))
    try:
        while (left := args.seconds - (time.monotonic() - began)) > 0.5:
            seconds = max(1, round(min(args.interval, left)))
            runs = [
                soak_load.start_wrk(site.base, folder / f"{name}.lua", c, seconds)
                for name, (_, c, _) in scripts.items()
            ]
            http, *sign = await asyncio.gather(
                *(asyncio.to_thread(soak_load.finish_wrk, r) for r in runs)
            )
            signed = sign[0] if sign else Segment(0, 0.0, 0, 0.0, 0.0)
            report = meter.report(time.monotonic() - began, http, signed, ops, failures)
            reports.append(report)
            log(line(report))
            if args.memory_reports and len(reports) % REPORTS_PER_MEMORY_REPORT == 0:
                os.kill(server.pid, signal.SIGUSR2)
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


def write_scripts(
    args: argparse.Namespace, folder: Path, site: Site
) -> dict[str, tuple[list[Request], int, float]]:
    """The wrk scripts: the HTTP mix, and the sign-ins unless turned off."""
    scripts = {"mix": (http_mix(site), CONNECTIONS, args.rate)}
    if args.sign_ins > 0:
        scripts["sign-in"] = (sign_in(site), SIGN_IN_CONNECTIONS, args.sign_ins)
    for name, (requests, connections, rate) in scripts.items():
        (folder / f"{name}.lua").write_text(soak_load.script(requests, connections, rate))
    return scripts


@contextmanager
def memory_reports(
    args: argparse.Namespace, folder: Path, server: servers.Server
) -> Iterator[None]:
    """With --memory-reports: the server's memory report (SIGUSR2, docs/operating.md) at
    the start, every REPORTS_PER_MEMORY_REPORT reports and at the end, copied out of the
    temporary data folder when the run ends."""
    if args.memory_reports:
        os.kill(server.pid, signal.SIGUSR2)
    try:
        yield
    finally:
        if args.memory_reports:
            os.kill(server.pid, signal.SIGUSR2)
            time.sleep(5)  # a traced snapshot of the whole heap takes a moment
            args.memory_reports.mkdir(parents=True, exist_ok=True)
            for report in sorted((folder / "data" / "diagnostics").glob("memory-*.txt")):
                shutil.copy(report, args.memory_reports)


def transfers(
    args: argparse.Namespace,
    site: Site,
    tunnel: Tunnel,
    stop: asyncio.Event,
    ops: dict[str, Operations],
) -> list[asyncio.Task[None]]:
    """File transfers and tunnel streams, as tasks of this process's loop."""
    tasks = []
    if args.files > 0:
        files = f"/v2/groups/{site.data_group}/files"
        size = args.file_kib * 1024
        work = soak_load.file_transfers(site.base, site.admin, files, size, args.files, stop, ops)
        tasks.append(asyncio.create_task(work))
    if args.streams > 0:
        sink, echo, size = tunnel.ports["SINK"], tunnel.ports["ECHO"], args.stream_kib * 1024
        work = soak_load.tunnel_streams(sink, echo, size, args.streams, stop, ops)
        tasks.append(asyncio.create_task(work))
    return tasks


class Meter:
    """Reads the counters and the server's /proc at the end of each interval."""

    def __init__(self, pid: int, devices: Devices, stream_mib: float, wal: Path) -> None:
        self.pid, self.devices, self.stream_mib, self.wal = pid, devices, stream_mib, wal
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
            cpu_pressure=cpu_pressure(),
            wal_mib=file_mib(self.wal),
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
        f" {'busy':>5} | {'WAL MiB':>7}"
    )


def line(r: Report) -> str:
    return (
        f"{r.at:5.0f} {r.http_rps:7.0f} {r.http_p50:7.2f} {r.http_p99:7.2f} |"
        f" {r.signin_rps:7.2f} {r.signin_p99:6.0f} | {r.mqtt_in:9.0f} {r.mqtt_out:6.0f} |"
        f" {r.files_ops:7.2f} {r.files_p99:6.0f} | {r.tunnel_mib:9.2f} {r.trip_p99:6.1f} |"
        f" {r.errors:6d} | {r.rss_mib:7.1f} {r.rss_peak_mib:5.0f} | {r.server_cpu:6.0%}"
        f" {r.load_cpu:5.0%} {r.cpu_pressure:4.0f}% | {r.wal_mib:7.1f}"
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
        f"database write-ahead log at the end: {reports[-1].wal_mib if reports else 0:.1f} MiB"
        " (it grows while no checkpoint runs)",
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end;"
        f" some task waited for a CPU {mean('cpu_pressure'):.0f}% of the time (busy)",
    ]
    lines += [f"FAILED: {f}" for f in verdict.failures[:10]]
    lines.append("PASSED" if verdict.passed else "FAILED")
    return "\n".join(lines)


def cpu_pressure() -> float:
    """How busy the whole machine is: the share of time some runnable task waited for a
    CPU over the last 10 s (Linux PSI); a p99 measured while it is high is the scheduler's."""
    try:
        return float(Path("/proc/pressure/cpu").read_text().split()[1].split("=")[1])
    except (OSError, IndexError, ValueError):
        return 0.0


def file_mib(path: Path) -> float:
    try:
        return path.stat().st_size / 2**20
    except OSError:
        return 0.0


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
    parser.add_argument(
        "--memory-reports", type=Path, help="the server's memory reports, each minute, go here"
    )
    parser.add_argument(
        "--trace-frames", type=int, default=0, help="traceback frames the reports show (slower)"
    )
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


SHOWN: list[str] = []  # what the last run of rows() printed, for the report


def details() -> list[str]:
    """The report's section on the soak: its reports every 10 s and its verdict."""
    return ["```", *SHOWN, "```"] if SHOWN else []


def rows(quick: bool) -> list[out.Row]:
    """A one-minute soak at the default mix, for the report (quick or not)."""
    args = parse(["--seconds", "60"])
    reports, verdict = run(args)
    SHOWN[:] = [header(), *(line(r) for r in reports), summary(reports, verdict).strip()]
    command = out.command("bench.soak", "--seconds", 60)

    def mean(name: str) -> float:
        return statistics.fmean(getattr(r, name) for r in reports) if reports else 0.0

    mix = (
        f"soak 60 s: HTTP mix, p50 {mean('http_p50'):.1f} / p99 {mean('http_p99'):.1f} ms"
        f" (beside {mean('signin_rps'):.1f} sign-ins/s, {mean('mqtt_in'):.0f} MQTT msg/s,"
        f" {mean('files_ops'):.1f} file transfers/s, {mean('tunnel_mib'):.1f} MiB/s tunnel)"
    )
    load = out.cpu(mean("server_cpu"), mean("load_cpu"))
    return [
        out.Row(mix, mean("http_rps"), "req/s", load=load, command=command),
        out.Row("soak: errors", verdict.errors, "", ceiling=0, command=command),
        out.Row(
            "soak: server RSS growth over the second half (least RSS of each 10 s)",
            verdict.rss_growth * 100,
            "%",
            ceiling=RSS_LIMIT * 100,
            command=command,
        ),
        out.Row(
            f"soak: HTTP p99 growth over the second half ({verdict.p99_growth_ms:+.1f} ms;"
            f" only growth past {P99_FLOOR_MS:g} ms counts)",
            verdict.p99_growth * 100,
            "%",
            ceiling=P99_LIMIT * 100,
            command=command,
            passed=not (verdict.p99_growth > P99_LIMIT and verdict.p99_growth_ms > P99_FLOOR_MS),
        ),
    ]


def main() -> None:
    _, verdict = run(parse())
    sys.exit(0 if verdict.passed else 1)


if __name__ == "__main__":
    main()
