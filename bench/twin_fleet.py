"""Device twins at a site's scale: DEVICES devices connected (raw MQTT clients in a process
of their own), each with a twin, UPDATERS of them publishing `reported` on their twin's
`update` once a second (each a durable write on the server). Measured on the same run:

- the HTTP token GET rate (`GET /v2/devices/{id}/twin` with an org admin's access token,
  wrk) with the fleet connected and updating, beside the same GET with no device connected
  (the broker idle), in turns ROUNDS times, the best of each: target at least 0.7x;
- the server's RSS per connected device: its RSS with the fleet connected less its RSS
  before, over DEVICES.

The fleet's process spends well under a core (raw sockets, a frame built per update); the
CPU column shows the server's share beside wrk's.

Run: .venv/bin/python -m bench.twin_fleet [--devices 1000] [--updaters 200]
     [--seconds 5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import select
import socket
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import rows as out
from bench import servers, wrk
from bench.files import rss_mib
from bench.mqtt_load import Login
from bench.mqtt_raw import _packet, _text, connect
from bench.twins import api_call, sign_in

FLOOR = 0.7


@dataclass(frozen=True)
class Member:
    id: str
    key: str
    root: str


@dataclass(frozen=True)
class Figures:
    devices: int
    updaters: int
    idle: wrk.Result
    loaded: wrk.Result
    rss_before: float  # MiB
    rss_after: float
    updates_per_s: float  # what the fleet sent while wrk ran

    @property
    def kib_per_device(self) -> float:
        return (self.rss_after - self.rss_before) * 1024 / self.devices


def _site(base: str, devices: int, **fields: Any) -> tuple[str, list[Member]]:
    """An org, its admin's token and `devices` devices (with `fields`), each with a twin."""
    staff = sign_in(base, password=servers.PASSWORD)
    api_call(base, "POST", "/v2/orgs", staff, {"name": "Fleet", "alias": "fleet"})
    admin = sign_in(base, password=servers.PASSWORD, scope="fleet")

    def one(n: int) -> Member:
        made = api_call(base, "POST", "/v2/devices", admin, {"name": f"d{n}", **fields})["device"]
        twin = {"desired": {"interval": 60, "mode": "eco"}}
        api_call(base, "PATCH", f"/v2/devices/{made['id']}/twin", admin, twin)
        return Member(made["id"], made["api_key"], made["root_scope"])

    with ThreadPoolExecutor(4) as pool:
        return admin, list(pool.map(one, range(devices)))


def fleet(
    port: int, members: Sequence[Member], updaters: int, sent: Any, ready: Any, stop: Any
) -> None:
    """Connect every member, then each second publish one report from each updater."""
    socks = [connect(port, Login(f"fleet-{m.id}", m.id, m.key)) for m in members]
    for sock in socks:
        sock.setblocking(False)
    topics = [f"{m.root}/devices/{m.id}/twin/update" for m in members[:updaters]]
    ready.set()
    tick = 0
    began = time.monotonic()
    while not stop.is_set():
        tick += 1
        for sock, topic in zip(socks, topics, strict=False):
            body = json.dumps({"reported": {"tick": tick}}).encode()
            sock.sendall(_packet(0x30, _text(topic) + body))
        with sent.get_lock():
            sent.value += len(topics)
        while (left := began + tick - time.monotonic()) > 0 and not stop.is_set():
            readable, _, _ = select.select(socks, [], [], left)
            for sock in readable:
                _drain(sock)
    for sock in socks:
        sock.close()


def _drain(sock: socket.socket) -> None:
    try:
        sock.recv(65536)
    except BlockingIOError:
        pass


def _measure(devices: int, updaters: int, seconds: float, rounds: int) -> Figures:
    """Idle and loaded in turns, `rounds` times, the best of each: on a machine that other
    work shares, a single pair measures which of the two the scheduler favoured."""
    with tempfile.TemporaryDirectory(prefix="edge-bench-fleet-") as folder:
        env = servers.mqtt_ports()
        with servers.edge(Path(folder), env) as server:
            admin, members = _site(server.url, devices)
            target = wrk.Target(f"{server.url}/v2/devices/{members[-1].id}/twin", token=admin)
            load = wrk.Load(connections=32, seconds=seconds)
            port = int(env["EDGE_MQTT_PORT"])
            idle: list[wrk.Result] = []
            loaded: list[tuple[wrk.Result, float, float]] = []
            rss_before = rss_mib(server.pid)
            for _ in range(rounds):
                idle.append(wrk.run(target, load, server.pid))
                loaded.append(_under_fleet(server, port, members, updaters, target, load))
            _check_updates(server.url, admin, members[0])
    best_idle = max(idle, key=lambda r: r.rps)
    best, rate, _ = max(loaded, key=lambda found: found[0].rps)
    rss_after = loaded[0][2]  # the first time the fleet connected
    return Figures(devices, updaters, best_idle, best, rss_before, rss_after, rate)


def _under_fleet(
    server: servers.Server,
    port: int,
    members: Sequence[Member],
    updaters: int,
    target: wrk.Target,
    load: wrk.Load,
) -> tuple[wrk.Result, float, float]:
    """The GET with the fleet connected and reporting: the result, the reports a second
    sent meanwhile, and the server's RSS with the fleet connected."""
    context = multiprocessing.get_context("spawn")
    ready, stop, sent = context.Event(), context.Event(), context.Value("q", 0)
    process = context.Process(target=fleet, args=(port, members, updaters, sent, ready, stop))
    process.start()
    try:
        if not ready.wait(300):
            raise RuntimeError("the fleet did not connect")
        time.sleep(3)  # every session settled, the reports under way
        rss = rss_mib(server.pid)
        before, began = sent.value, time.monotonic()
        result = wrk.run(target, load, server.pid, settle=False)
        rate = (sent.value - before) / (time.monotonic() - began)
    finally:
        stop.set()
        process.join(60)
    return result, rate, rss


def _check_updates(base: str, admin: str, member: Member) -> None:
    twin = api_call(base, "GET", f"/v2/devices/{member.id}/twin", admin)["twin"]
    if not twin["reported"].get("tick"):
        raise RuntimeError("the fleet's reports never reached the twins")


def _print(f: Figures) -> None:
    print(
        f"{f.devices} devices connected, {f.updaters} reporting once a second"
        f" ({f.updates_per_s:.0f} reports/s sent): twin GET {f.loaded.rps:,.0f} req/s"
        f" (p99 {f.loaded.p99_ms:.1f} ms, srv/wrk {f.loaded.cpu()}) beside"
        f" {f.idle.rps:,.0f} req/s idle (p99 {f.idle.p99_ms:.1f} ms, srv/wrk {f.idle.cpu()}):"
        f" {f.loaded.rps / f.idle.rps:.2f}x (target >= {FLOOR:g}x); server RSS"
        f" {f.rss_before:.1f} -> {f.rss_after:.1f} MiB, {f.kib_per_device:.1f} KiB per device",
        flush=True,
    )


def as_rows(f: Figures, line: str) -> list[out.Row]:
    return [
        out.Row(
            f"twin GET (token), {f.devices} devices connected, {f.updaters} reporting/s,"
            f" p99 {f.loaded.p99_ms:.1f} ms",
            f.loaded.rps,
            "req/s",
            f"the same GET, broker idle, p99 {f.idle.p99_ms:.1f} ms",
            f.idle.rps,
            floor=FLOOR,
            load=f"srv {f.loaded.server_cpu * 100:.0f}% / gen {f.loaded.wrk_cpu * 100:.0f}%",
            command=line,
        ),
        out.Row(
            f"server RSS per connected device, {f.devices} devices",
            f.kib_per_device,
            "KiB",
            lower_is_better=True,
            command=line,
        ),
    ]


def run(devices: int, updaters: int, seconds: float, rounds: int) -> Figures:
    figures = _measure(devices, updaters, seconds, rounds)
    _print(figures)
    return figures


def rows(quick: bool) -> list[out.Row]:
    devices, updaters, seconds, rounds = (200, 40, 3, 1) if quick else (1000, 200, 5, 3)
    line = out.command(
        "bench.twin_fleet",
        *("--devices", devices, "--updaters", updaters),
        *("--seconds", seconds, "--rounds", rounds),
    )
    return as_rows(run(devices, updaters, seconds, rounds), line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--updaters", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3, help="idle and loaded, in turns")
    args = parser.parse_args()
    run(args.devices, args.updaters, args.seconds, args.rounds)


if __name__ == "__main__":
    main()
