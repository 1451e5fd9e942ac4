"""The embedded MQTT broker beside Mosquitto, in one run, with paho-mqtt clients and
100-byte payloads: end-to-end QoS 0 and QoS 1 throughput (publishers paced by their
subscribers, bench/mqtt_load.py), fan-out 1 -> 50, TLS connects per second with client
certificates, broker memory; then HTTP token-authenticated GET throughput (wrk) with the
broker idle and while 200 devices each publish 10 QoS 1 messages per second.

edge is the real `edge serve` with its real device registry: the benchmark creates an
organization and its devices through the HTTP API (`POST /v2/devices`, IoT scope `/bench`
with publish and subscribe rights), and each client signs in with its device's ID and API
key, or over TLS with the client certificate the site CA issued it, so authentication and
topic ACLs are on for every message. Its per-client rate limit is set far above these
rates so that it is not what is measured. Mosquitto runs with neither authentication nor
ACLs (the same certificate passes its TLS check).

Each figure comes with the CPU the broker process used (from /proc, 100% = one core) and
the CPU all the client processes used. paho costs its clients several times the broker's
CPU per message, so with paho the clients are the limit on a small machine. A saturation
run therefore drives QoS 0 1 -> 1 with raw-socket clients (bench/mqtt_raw.py, well under a
microsecond of client CPU per message), publishers in 1 and then 2 processes: when a second
publisher process brings no more throughput while the broker takes most of a core and
several times the CPU of any client process, the broker, not the load generator, is the
limit. Usage: python -m bench.mqtt
[--seconds 8] [--pairs 4]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench import mqtt_load, mqtt_raw
from bench import rows as out
from bench.http_requests import free_port
from bench.mqtt_load import Login
from bench.servers import UNBOUNDED, edge_command

PASSWORD = "bench-password-123"
SCOPES = {"/bench": {"can_publish": True, "can_subscribe": True}}
DEVICES = 260
FANOUT = 50
SITE_DEVICES, SITE_RATE = 200, 10.0
# How far a publisher may run ahead of its slowest subscriber: wide enough that the round
# trip through a busy machine's scheduler does not cap the rate, narrow enough to stay
# inside edge's default per-client queue bounds (1 MiB of QoS 0, 1000 QoS 1 messages).
WINDOW = {0: 4000, 1: 800}
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
    root: str  # the devices' root scope (their org): every topic lies under it
    http: int = 0

    def topic(self, i: int) -> str:
        return f"{self.root}/bench/t{i}"


@dataclass
class Site:
    """What the benchmark made through edge's HTTP API: the org, a token, the devices."""

    org_id: str
    token: str
    logins: list[Login]
    tls: dict[str, str]


@dataclass
class Figure:
    rate: float
    broker_cpu: float
    clients_cpu: float
    busiest_client: float = 0.0


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
        self.busiest = 100 * max(used[1:], default=0.0) / seconds
        return seconds, 100 * used[0] / seconds, 100 * sum(used[1:]) / seconds


def throughput(
    broker: Broker, qos: int, pairs: int, fanout: int, seconds: float, pub_procs: int = 2
) -> Figure:
    """Messages delivered per second: `pairs` publishers (in `pub_procs` processes), each
    to `fanout` subscribers."""
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
    pub_groups = _split(range(pairs), min(pub_procs, pairs))
    procs += [
        ctx.Process(
            target=mqtt_load.publishers,
            args=(
                broker.port,
                [pub_logins[i] for i in g],
                [broker.topic(i) for i in g],
                [watched[i] for i in g],
                qos,
                WINDOW[qos],
                counts,
                ready,
                go,
                stop,
            ),
        )
        for g in pub_groups
    ]
    return _measure(broker, procs, counts, ready, go, stop, seconds)


def raw_throughput(broker: Broker, pairs: int, pub_procs: int, seconds: float) -> Figure:
    """QoS 0 1 -> 1 with the cheap raw-socket clients (bench/mqtt_raw.py): the broker's
    ceiling. Subscribers in 2 processes, publishers in `pub_procs`."""
    counts = ctx.RawArray("q", pairs)
    ready, go, stop = ctx.Semaphore(0), ctx.Event(), ctx.Event()
    topics = [broker.topic(i) for i in range(pairs)]
    logins = [replace_id(broker.logins[i], f"rs{i}") for i in range(pairs)]
    pub_logins = [replace_id(broker.logins[pairs + i], f"rp{i}") for i in range(pairs)]
    procs = [
        ctx.Process(
            target=mqtt_raw.subscribers,
            args=(broker.port, [logins[i] for i in g], [topics[i] for i in g], g)
            + (counts, ready, stop),
        )
        for g in _split(range(pairs), 2)
    ]
    procs += [
        ctx.Process(
            target=mqtt_raw.publishers,
            args=(
                broker.port,
                [pub_logins[i] for i in g],
                [topics[i] for i in g],
                [[i] for i in g],
                WINDOW[0],
                counts,
                ready,
                go,
                stop,
            ),
        )
        for g in _split(range(pairs), pub_procs)
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
        return Figure(delivered / elapsed, broker_cpu, clients_cpu, window.busiest)
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
        return Figure(done / elapsed, broker_cpu, clients_cpu, window.busiest)
    finally:
        stop.set()
        for proc in procs:
            proc.join(10)


def replace_id(login: Login, prefix: str) -> Login:
    return Login(prefix + login.client_id, login.username, login.password)


def _split(items: range, parts: int) -> list[list[int]]:
    return [list(items[i::parts]) for i in range(parts) if items[i::parts]]


# The brokers


def prepare(folder: Path) -> Path:
    """edge's data folder with its CA and the TLS listener's certificate (Mosquitto uses the
    same files)."""
    from edge.certificates import ca
    from storage import layout

    data = folder / "edge"
    layout.prepare(data)
    ca.load_or_create_ca(data)
    ca.server_certificate(data, ["localhost", "127.0.0.1"])
    return data


@contextmanager
def edge(folder: Path, data: Path) -> Iterator[tuple[Broker, Site]]:
    """`edge serve` (the venv's), and its devices made through its HTTP API."""
    http, port, tls_port = free_port(), free_port(), free_port()
    command = [*edge_command(), "serve", "--data-dir", str(data), "--port", str(http)]
    command += ["--mqtt-port", str(port), "--mqtt-tls-port", str(tls_port)]
    command += ["--mqtt-ws-port", "0", "--mqtt-wss-port", "0", "--log-level", "warning"]
    command += ["--mqtt-rate-limit", "10000000"]  # far above any rate here: not measured
    env = {**os.environ, "EDGE_ADMIN_PASSWORD": PASSWORD, **UNBOUNDED}  # all from one address
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=sys.stderr)
    try:
        _wait_port(http)
        site = make_site(f"http://127.0.0.1:{http}", data, folder)
        broker = Broker("edge", process, port, tls_port, site.logins, site.tls, site.org_id, http)
        yield broker, site
    finally:
        process.terminate()
        process.wait(30)


def make_site(base: str, data: Path, folder: Path) -> Site:
    """An org and DEVICES devices created through the API, as an operator would."""
    from edge.certificates import ca

    staff = _post_form(
        f"{base}/v2/auth/token",
        {"grant_type": "password", "username": "admin", "password": PASSWORD},
    )["access_token"]
    org_id = _post_json(f"{base}/v2/orgs", staff, {"name": "Bench", "alias": "bench"})["org"]["id"]
    scoped = _post_form(
        f"{base}/v2/auth/token",
        {"grant_type": "password", "username": "admin", "password": PASSWORD, "scope": "bench"},
    )["access_token"]
    logins, tls = [], {}
    for i in range(DEVICES):
        body = {"name": f"bench-{i}", "iot_scopes": SCOPES}
        made = _post_json(f"{base}/v2/devices", scoped, body)["device"]
        assert made["root_scope"] == org_id, made["root_scope"]
        logins.append(Login(made["id"], made["id"], made["api_key"]))
        if i == 0:  # its client certificate, for the TLS connects
            cert, key = folder / "device.pem", folder / "device.key"
            cert.write_text(made["certificate"])
            key.write_text(made["private_key"])
            server = ca.server_certificate(data, ["localhost", "127.0.0.1"])  # prepare's
            tls = {
                "ca": str(server.ca),
                "cert": str(cert),
                "key": str(key),
                "server_cert": str(server.cert),
                "server_key": str(server.key),
            }
    return Site(org_id, staff, logins, tls)


def _post_form(url: str, form: dict[str, str]) -> dict[str, Any]:
    with urllib.request.urlopen(url, data=urllib.parse.urlencode(form).encode()) as response:
        return dict(json.load(response))


def _post_json(url: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        return dict(json.load(response))


@contextmanager
def mosquitto(folder: Path, tls: dict[str, str], root: str) -> Iterator[Broker]:
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
        yield Broker("mosquitto", process, port, tls_port, logins, tls, root)
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
        logins = [Login(f"a{i}") for i in range(DEVICES)]
        yield Broker("amqtt", process, port, 0, logins, {}, "stock")
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


def http_under_load(broker: Broker, site: Site, seconds: float) -> tuple[float, float]:
    """(req/s with the broker idle, req/s while it carries the site) for a
    token-authenticated GET; the two measured back to back."""
    token = site.token
    url = f"http://127.0.0.1:{broker.http}/v2/orgs/{site.org_id}"
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


def run(seconds: float, pairs: int, stock: bool) -> list[out.Row]:
    folder = Path(tempfile.mkdtemp(prefix="edge-mqtt-bench-"))
    data = prepare(folder)
    scenarios: list[tuple[str, Callable[[Broker], Figure]]] = [
        (f"QoS 0, 1 -> 1 ({pairs} pairs)", lambda b: throughput(b, 0, pairs, 1, seconds)),
        (f"QoS 1, 1 -> 1 ({pairs} pairs)", lambda b: throughput(b, 1, pairs, 1, seconds)),
        (f"QoS 0, 1 -> {FANOUT} (deliveries)", lambda b: throughput(b, 0, 1, FANOUT, seconds)),
        (f"QoS 1, 1 -> {FANOUT} (deliveries)", lambda b: throughput(b, 1, 1, FANOUT, seconds)),
        ("TLS connects, client certificates", lambda b: connects(b, seconds)),
    ]
    results: dict[str, dict[str, Figure]] = {}
    memory: dict[str, tuple[float, float]] = {}
    with edge(folder, data) as (ours, site), mosquitto(folder, site.tls, site.org_id) as theirs:
        idle = {b.name: rss_mib(b.process.pid) for b in (ours, theirs)}
        for name, scenario in scenarios:
            results[name] = {b.name: scenario(b) for b in (ours, theirs)}
        memory = {b.name: (idle[b.name], rss_mib(b.process.pid, "VmHWM")) for b in (ours, theirs)}
        saturation = {
            b.name: {procs: raw_throughput(b, 8, procs, seconds) for procs in (1, 2)}
            for b in (ours, theirs)
        }
        http = [http_under_load(ours, site, seconds) for _ in range(3)]
    _report(results, memory, http, seconds)
    _report_saturation(saturation)
    if stock:
        _stock(scenarios[:2])
    shutil.rmtree(folder, ignore_errors=True)
    return as_rows(results, memory, http, saturation)


def as_rows(
    results: dict[str, dict[str, Figure]],
    memory: dict[str, tuple[float, float]],
    http: list[tuple[float, float]],
    saturation: dict[str, dict[int, Figure]],
) -> list[out.Row]:
    """Edge beside Mosquitto (no target set: the ratio is what the issues asked to see)."""
    found = [
        out.Row(
            f"MQTT {name}",
            figures["edge"].rate,
            "msg/s" if "connects" not in name else "connects/s",
            "Mosquitto (no auth, no ACLs)",
            figures["mosquitto"].rate,
            load=f"{_load(figures['edge'])}; mosq {_load(figures['mosquitto'])}",
        )
        for name, figures in results.items()
    ]
    found += [
        out.Row(
            f"MQTT QoS 0 saturation, raw clients, {procs} publisher process(es)",
            figures["edge"].rate,
            "msg/s",
            "Mosquitto, same clients",
            figures["mosquitto"].rate,
            load=_load(figures["edge"]),
        )
        for procs, figures in ((n, {b: saturation[b][n] for b in saturation}) for n in (1, 2))
    ]
    found.append(
        out.Row(
            "MQTT broker peak RSS",
            memory["edge"][1],
            "MiB",
            "Mosquitto peak RSS",
            memory["mosquitto"][1],
            lower_is_better=True,
        )
    )
    idle = statistics.median(rps for rps, _ in http)
    busy = statistics.median(rps for _, rps in http)
    found.append(
        out.Row(
            f"HTTP token GET while {SITE_DEVICES} devices publish {SITE_RATE:.0f} QoS 1 msg/s",
            busy,
            "req/s",
            "the same with the broker idle",
            idle,
        )
    )
    return found


def _load(figure: Figure) -> str:
    return (
        f"srv {figure.broker_cpu:.0f}% / gen {figure.clients_cpu:.0f}%"
        f" (busiest {figure.busiest_client:.0f}%)"
    )


def rows(quick: bool) -> list[out.Row]:
    seconds = 3.0 if quick else 8.0
    line = out.command("bench.mqtt", "--seconds", f"{seconds:g}")
    return [replace(r, command=line) for r in run(seconds, 4, False)]


def _report_saturation(runs: dict[str, dict[int, Figure]]) -> None:
    """Is the broker the limit? It is when a second publisher process brings no more
    throughput while the broker takes most of a core and several times the CPU of any
    client process (on a machine shared with other work it cannot always get a full one)."""
    print(
        "\nSaturation: QoS 0 1 -> 1, 8 pairs, raw-socket clients (bench/mqtt_raw.py, well under"
        " a microsecond\nof client CPU per message), subscribers in 2 processes, publishers in"
        " 1 and then 2:"
    )
    for name, figures in runs.items():
        for procs, figure in figures.items():
            print(
                f"  {name:9} {procs} publisher process(es): {figure.rate:8.0f}/s"
                f"  broker {figure.broker_cpu:4.0f}% of a core, clients {figure.clients_cpu:4.0f}%"
                f" in all, busiest client process {figure.busiest_client:4.0f}%"
            )
        one, two = figures[1], figures[2]
        broker = min(one.broker_cpu, two.broker_cpu)
        busiest = max(one.busiest_client, two.busiest_client)
        flat = two.rate <= 1.15 * one.rate
        if broker >= 60 and broker >= 3 * busiest and flat:
            verdict = (
                "the broker is the limit: a second publisher process brings no more"
                f" throughput, the broker takes {broker:.0f}% or more of a core (what the"
                " machine's other load leaves it) and the busiest client process"
                f" {busiest:.0f}% at most"
            )
        else:
            verdict = (
                f"not shown to be broker-bound (broker at least {broker:.0f}%, busiest client"
                f" process {busiest:.0f}%, a second publisher process changed the rate"
                f" {two.rate / one.rate if one.rate else 0:.2f}x)"
            )
        print(f"  {name}: {verdict}")
    print(f"  ({os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the end)")


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
        f"edge with real devices (API keys, a client certificate) and topic ACLs,\n"
        f"Mosquitto {mosquitto_version()} without. CPU: % of one core used by the broker process,"
        " its CPU time per message,\n"
        f"and the % of one core used by all the client processes together ({os.cpu_count()}"
        " cores in all).\n"
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
