"""The embedded MQTT broker beside Mosquitto, in one run, with paho-mqtt clients and
100-byte payloads: end-to-end QoS 0 and QoS 1 throughput (publishers paced by their
subscribers, bench/mqtt_load.py), fan-out 1 -> 50, TLS connects per second with client
certificates, broker memory; then HTTP token-authenticated GET throughput (wrk) with the
broker idle and while 200 devices each publish 10 QoS 1 messages per second.

edge runs with authentication (API keys, client certificates) and topic ACLs on, and its
per-client rate limit set far above these rates so that it is not what is measured;
Mosquitto runs with neither. Each figure comes with the CPU the broker process used
(100% = one core) and the CPU the client processes used, so a reader can tell whether the
broker was the limit. Usage: python -m bench.mqtt [--seconds 8] [--pairs 4]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import mqtt_load
from bench.http_requests import free_port
from bench.mqtt_certs import issue_client
from bench.mqtt_load import Login

ORG = "org0000000000001"
PASSWORD = "bench-password-123"
DEVICES = 260
FANOUT = 50
SITE_DEVICES, SITE_RATE = 200, 10.0
TICKS = os.sysconf("SC_CLK_TCK")
ctx = mp.get_context("fork")


@dataclass
class Broker:
    name: str
    process: subprocess.Popen[bytes]
    port: int
    tls_port: int
    logins: list[Login]
    tls: dict[str, str]

    def topic(self, i: int) -> str:
        return f"{ORG}/bench/t{i}"


@dataclass
class Figure:
    rate: float
    broker_cpu: float
    clients_cpu: float


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    match = re.search(rf"{field}:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(match.group(1)) / 1024 if match else 0.0


class Window:
    """CPU of the broker and of the client processes over a measured interval."""

    def __init__(self, broker: int, clients: list[int]) -> None:
        self.pids = [broker, *clients]
        self.began = time.perf_counter()
        self.cpu = [cpu_seconds(pid) for pid in self.pids]

    def close(self) -> tuple[float, float, float]:
        """(seconds, broker CPU %, clients CPU %)."""
        seconds = time.perf_counter() - self.began
        used = [cpu_seconds(pid) - before for pid, before in zip(self.pids, self.cpu, strict=True)]
        return seconds, 100 * used[0] / seconds, 100 * sum(used[1:]) / seconds


def throughput(broker: Broker, qos: int, pairs: int, fanout: int, seconds: float) -> Figure:
    """Messages delivered per second: `pairs` publishers, each to `fanout` subscribers."""
    subs = pairs * fanout
    counts = ctx.RawArray("q", subs)
    ready, go, stop = ctx.Semaphore(0), ctx.Event(), ctx.Event()
    topics = [broker.topic(i // fanout) for i in range(subs)]
    logins = [replace_id(broker.logins[i], f"s{i}") for i in range(subs)]
    groups = _split(range(subs), max(1, min(4, subs // 10 or pairs)))
    procs = [
        ctx.Process(
            target=mqtt_load.subscribers,
            args=(
                broker.port,
                [logins[i] for i in g],
                [topics[i] for i in g],
                g,
                qos,
                counts,
                ready,
                stop,
            ),
        )
        for g in groups
    ]
    pub_logins = [replace_id(broker.logins[subs + i], f"p{i}") for i in range(pairs)]
    watched = [list(range(i * fanout, (i + 1) * fanout)) for i in range(pairs)]
    pub_groups = _split(range(pairs), min(2, pairs))
    procs += [
        ctx.Process(
            target=mqtt_load.publishers,
            args=(
                broker.port,
                [pub_logins[i] for i in g],
                [broker.topic(i) for i in g],
                [watched[i] for i in g],
                qos,
                500,
                counts,
                ready,
                go,
                stop,
            ),
        )
        for g in pub_groups
    ]
    return _measure(broker, procs, counts, ready, go, stop, seconds)


def _measure(
    broker: Broker, procs: list[Any], counts: Any, ready: Any, go: Any, stop: Any, seconds: float
) -> Figure:
    for proc in procs:
        proc.start()
    try:
        for _ in procs:
            if not ready.acquire(timeout=60):
                raise RuntimeError("the clients did not get ready")
        go.set()
        time.sleep(1.0)  # warm-up
        window, before = Window(broker.process.pid, [p.pid for p in procs]), sum(counts)
        time.sleep(seconds)
        delivered = sum(counts) - before
        elapsed, broker_cpu, clients_cpu = window.close()
        return Figure(delivered / elapsed, broker_cpu, clients_cpu)
    finally:
        stop.set()
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()


def connects(broker: Broker, seconds: float, processes: int = 3) -> Figure:
    total, stop = ctx.Value("q", 0), ctx.Event()
    procs = [
        ctx.Process(
            target=mqtt_load.connectors,
            args=(
                broker.tls_port,
                [replace_id(broker.logins[0], f"c{i}-")],
                broker.tls,
                total,
                stop,
            ),
        )
        for i in range(processes)
    ]
    for proc in procs:
        proc.start()
    try:
        time.sleep(1.5)
        window, before = Window(broker.process.pid, [p.pid for p in procs]), total.value
        time.sleep(seconds)
        done = total.value - before
        elapsed, broker_cpu, clients_cpu = window.close()
        return Figure(done / elapsed, broker_cpu, clients_cpu)
    finally:
        stop.set()
        for proc in procs:
            proc.join(10)


def replace_id(login: Login, prefix: str) -> Login:
    return Login(prefix + login.client_id, login.username, login.password)


def _split(items: range, parts: int) -> list[list[int]]:
    return [list(items[i::parts]) for i in range(parts) if items[i::parts]]


# The brokers


def prepare(folder: Path) -> tuple[Path, list[dict[str, Any]], dict[str, str]]:
    """edge's data folder with its CA, the benchmark's devices, one client certificate."""
    from edge.ops import ca
    from storage import layout

    data = folder / "edge"
    layout.prepare(data)
    ca.load_or_create_ca(data)
    server = ca.server_certificate(data, ["localhost", "127.0.0.1"])
    cert, key = issue_client(data, "bench-tls", folder)
    devices = [
        {"id": f"dev{i}", "org": ORG, "key": secrets.token_urlsafe(32), "cert": None}
        for i in range(DEVICES)
    ]
    devices[0]["cert"] = str(cert)
    tls = {
        "ca": str(server.ca),
        "cert": str(cert),
        "key": str(key),
        "server_cert": str(server.cert),
        "server_key": str(server.key),
    }
    return data, devices, tls


@contextmanager
def edge(
    folder: Path, data: Path, devices: list[dict[str, Any]], tls: dict[str, str]
) -> Iterator[Broker]:
    listing = folder / "devices.json"
    listing.write_text(json.dumps(devices))
    http, port, tls_port = free_port(), free_port(), free_port()
    command = [sys.executable, "-m", "bench.mqtt_server", str(listing), "--data-dir", str(data)]
    command += ["--port", str(http), "--mqtt-port", str(port), "--mqtt-tls-port", str(tls_port)]
    command += ["--mqtt-ws-port", "0", "--log-level", "warning", "--mqtt-rate-limit", "10000000"]
    env = {**os.environ, "EDGE_ADMIN_PASSWORD": PASSWORD}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=sys.stderr)
    try:
        assert process.stdout is not None and b"ready" in process.stdout.readline()
        logins = [Login(d["id"], d["id"], d["key"]) for d in devices]
        broker = Broker("edge", process, port, tls_port, logins, tls)
        broker.http = http  # type: ignore[attr-defined]
        yield broker
    finally:
        process.terminate()
        process.wait(30)


@contextmanager
def mosquitto(folder: Path, tls: dict[str, str]) -> Iterator[Broker]:
    port, tls_port = free_port(), free_port()
    conf = folder / "mosquitto.conf"
    run_as = "user root\n" if os.geteuid() == 0 else ""  # it cannot read edge's owner-only CA
    conf.write_text(
        f"{run_as}per_listener_settings false\nallow_anonymous true\npersistence false\n"
        "log_dest none\n"
        f"listener {port} 127.0.0.1\n"
        f"listener {tls_port} 127.0.0.1\ncafile {tls['ca']}\ncertfile {tls['server_cert']}\n"
        f"keyfile {tls['server_key']}\nrequire_certificate true\n"
    )
    process = subprocess.Popen([mosquitto_binary(), "-c", str(conf)], stderr=subprocess.DEVNULL)
    try:
        _wait_port(port)
        logins = [Login(f"m{i}") for i in range(DEVICES)]
        yield Broker("mosquitto", process, port, tls_port, logins, tls)
    finally:
        process.terminate()
        process.wait(30)


@contextmanager
def stock_amqtt() -> Iterator[Broker]:
    port = free_port()
    command = [sys.executable, "-m", "bench.mqtt_stock", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert process.stdout is not None and b"ready" in process.stdout.readline()
        yield Broker("amqtt", process, port, 0, [Login(f"a{i}") for i in range(DEVICES)], {})
    finally:
        process.kill()
        process.wait(30)


def mosquitto_binary() -> str:
    found = shutil.which("mosquitto") or (
        "/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None
    )
    if found is None:
        sys.exit("mosquitto is not installed: `make bench` installs Debian's package")
    return found


def mosquitto_version() -> str:
    out = subprocess.run([mosquitto_binary(), "-h"], capture_output=True, text=True).stdout
    match = re.search(r"mosquitto version (\S+)", out)
    return match.group(1) if match else "?"


def _wait_port(port: int) -> None:
    import socket

    for _ in range(200):
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


# HTTP while the broker carries a site


def http_under_load(broker: Broker, seconds: float) -> tuple[float, float]:
    """(req/s with the broker idle, req/s while it carries the site) for a
    token-authenticated GET; the two measured back to back."""
    base = f"http://127.0.0.1:{broker.http}"  # type: ignore[attr-defined]
    token, org_id = _token_and_org(base)
    url = f"{base}/v2/orgs/{org_id}"
    idle = _wrk(url, token, seconds)
    ready, stop = ctx.Semaphore(0), ctx.Event()
    groups = _split(range(SITE_DEVICES), 4)
    procs = [
        ctx.Process(
            target=mqtt_load.devices,
            args=(
                broker.port,
                [broker.logins[i] for i in g],
                [broker.topic(1000 + i) for i in g],
                SITE_RATE,
                ready,
                stop,
            ),
        )
        for g in groups
    ]
    for proc in procs:
        proc.start()
    try:
        for _ in procs:
            ready.acquire(timeout=60)
        time.sleep(1.0)
        busy = _wrk(url, token, seconds)
    finally:
        stop.set()
        for proc in procs:
            proc.join(10)
    return idle, busy


def _token_and_org(base: str) -> tuple[str, str]:
    form = urllib.parse.urlencode(
        {"grant_type": "password", "username": "admin", "password": PASSWORD}
    )
    with urllib.request.urlopen(f"{base}/v2/auth/token", data=form.encode()) as response:
        token = json.load(response)["access_token"]
    request = urllib.request.Request(
        f"{base}/v2/orgs",
        data=json.dumps({"name": "Bench"}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        return token, json.load(response)["org"]["id"]


def _wrk(url: str, token: str, seconds: float) -> float:
    out = subprocess.run(
        ["wrk", "-t2", "-c16", f"-d{seconds:.0f}s", "-H", f"Authorization: Bearer {token}", url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    match = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if match is None or "Non-2xx" in out:
        raise RuntimeError(f"wrk failed:\n{out}")
    return float(match.group(1))


# The report


def run(seconds: float, pairs: int, stock: bool) -> None:
    folder = Path(tempfile.mkdtemp(prefix="edge-mqtt-bench-"))
    data, devices, tls = prepare(folder)
    scenarios: list[tuple[str, Callable[[Broker], Figure]]] = [
        (f"QoS 0, 1 -> 1 ({pairs} pairs)", lambda b: throughput(b, 0, pairs, 1, seconds)),
        (f"QoS 1, 1 -> 1 ({pairs} pairs)", lambda b: throughput(b, 1, pairs, 1, seconds)),
        (f"QoS 0, 1 -> {FANOUT} (deliveries)", lambda b: throughput(b, 0, 1, FANOUT, seconds)),
        (f"QoS 1, 1 -> {FANOUT} (deliveries)", lambda b: throughput(b, 1, 1, FANOUT, seconds)),
        ("TLS connects, client certificates", lambda b: connects(b, seconds)),
    ]
    results: dict[str, dict[str, Figure]] = {}
    memory: dict[str, tuple[float, float]] = {}
    with edge(folder, data, devices, tls) as ours, mosquitto(folder, tls) as theirs:
        idle = {b.name: rss_mib(b.process.pid) for b in (ours, theirs)}
        for name, scenario in scenarios:
            results[name] = {b.name: scenario(b) for b in (ours, theirs)}
        memory = {b.name: (idle[b.name], rss_mib(b.process.pid, "VmHWM")) for b in (ours, theirs)}
        http = [http_under_load(ours, seconds) for _ in range(3)]
    _report(results, memory, http, seconds)
    if stock:
        _stock(scenarios[:2])
    shutil.rmtree(folder, ignore_errors=True)


def _stock(scenarios: list[tuple[str, Callable[[Broker], Figure]]]) -> None:
    """Stock amqtt (no authentication, no ACLs) through the same scenarios."""
    print("\nstock amqtt 0.12.1, anonymous, no ACLs:")
    with stock_amqtt() as stock:
        for name, scenario in scenarios:
            figure = scenario(stock)
            print(f"  {name:34} {figure.rate:8.0f}/s  {_cpu(figure)}")


def _report(
    results: dict[str, dict[str, Figure]],
    memory: dict[str, tuple[float, float]],
    http: list[tuple[float, float]],
    seconds: float,
) -> None:
    print(
        f"MQTT on loopback, 100-byte payloads, paho-mqtt clients, {seconds:.0f} s per figure; "
        f"edge with authentication and topic ACLs, Mosquitto {mosquitto_version()} without.\n"
        "CPU: % of one core used by the broker process, its CPU time per message, and the\n"
        "% of one core used by all the client processes together (2 cores in all).\n"
    )
    head = f"{'scenario':34} {'edge/s':>8} {'mosq/s':>8} {'ratio':>6}"
    print(f"{head}  {'edge CPU  us/msg  clients':>26}  {'mosq CPU  us/msg  clients':>26}")
    for name, figures in results.items():
        ours, theirs = figures["edge"], figures["mosquitto"]
        ratio = ours.rate / theirs.rate if theirs.rate else 0.0
        rates = f"{ours.rate:8.0f} {theirs.rate:8.0f} {ratio:5.2f}x"
        print(f"{name:34} {rates}  {_cpu(ours)}  {_cpu(theirs)}")
    print()
    for name, (idle, peak) in memory.items():
        print(f"{name:10} RSS idle {idle:6.1f} MiB, peak {peak:6.1f} MiB (process total)")
    idle = statistics.median(rps for rps, _ in http)
    busy = statistics.median(rps for _, rps in http)
    rounds = ", ".join(f"{a:.0f}/{b:.0f}" for a, b in http)
    print(
        f"\nHTTP GET /v2/orgs/{{id}} with a token, wrk -t2 -c16, median of {len(http)} rounds "
        f"(idle/busy: {rounds}):\n  broker idle {idle:.0f} req/s; with {SITE_DEVICES} devices "
        f"each publishing {SITE_RATE:.0f} QoS 1 msg/s {busy:.0f} req/s: {busy / idle:.2f}x"
    )


def _cpu(figure: Figure) -> str:
    per_message = 1e6 * figure.broker_cpu / 100 / figure.rate if figure.rate else 0.0
    return f"{figure.broker_cpu:7.0f}% {per_message:7.1f} {figure.clients_cpu:7.0f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--stock-amqtt", action="store_true", help="also run stock amqtt")
    args = parser.parse_args()
    run(args.seconds, args.pairs, args.stock_amqtt)


if __name__ == "__main__":
    main()
