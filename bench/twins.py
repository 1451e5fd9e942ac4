"""Device twins: the delta's round trip, beside a plain MQTT publish to the same client.

`edge serve` runs in its own process. A device's raw MQTT client (plain sockets, QoS 1
subscriptions, every PUBLISH acknowledged) subscribes to its twin's `update/delta` and to
a plain topic of its own namespace. Then, one at a time, on the same run:

- twin: `PATCH /v2/devices/{id}/twin` with a new `desired` value over a kept-alive HTTP
  connection (a plain socket, bench/raw_http.py: the request's bytes made before the clock
  starts, as the MQTT clients' packets are), until the device's client has the
  `update/delta` (the write is durable before the delta leaves);
- plain: a second connection of the same device publishes at QoS 1 on its
  `<root>/devices/<id>/inbox`, until the device's client has the message;
- durable: `PUT /v2/groups/{id}/data/...` on the same HTTP connection, until its answer: an
  HTTP write and its durable commit with no MQTT, the floor under the twin's path in edge;
- bare: after edge has stopped, the same PUT to bench/bare_data_server.py (aiohttp and
  SQLite, `synchronous = FULL`, on a copy of the same database) with none of edge's work:
  no caller, no permission, no checks, no audit row, no group commit, no MQTT. It is the
  floor of the stack itself (aiohttp, SQLite, one fsync a write) under any durable HTTP
  write, shown beside the target so that where the target sits is in the same run.

Each is measured ROUNDS times, p50 and p99, at two sizes: few devices with a small twin,
and many devices (each with a twin) with a twin of about 6 KiB, so a growing table and a
growing document both show. The target: the twin's p99 within 3x the plain publish's.
One request at a time, so neither side is saturated: the load column shows the server's
CPU beside this generator's over the run.

Run: .venv/bin/python -m bench.twins [--rounds 500] [--devices 1000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench import rows as out
from bench import servers
from bench.files import cpu_seconds
from bench.mqtt_load import Login
from bench.mqtt_raw import _packet, _read_exactly, _text, connect
from bench.raw_http import RawHttp
from storage import layout

TARGET = 3.0  # the twin's p99 at most 3x the plain publish's


@dataclass(frozen=True)
class Figures:
    devices: int
    document_bytes: int
    twin: list[float]  # seconds
    plain: list[float]
    durable: list[float]
    bare: list[float]  # the stack's floor: bench/bare_data_server.py's durable PUT
    server_cpu: float  # shares of one core over the run
    generator_cpu: float


class Device:
    """A raw MQTT 3.1.1 client whose QoS 1 subscriptions it acknowledges itself."""

    def __init__(self, port: int, login: Login) -> None:
        self.sock = connect(port, login)
        self.next_id = 1

    def subscribe(self, topic: str) -> None:
        body = self.next_id.to_bytes(2, "big") + _text(topic) + b"\x01"
        self.next_id += 1
        self.sock.sendall(_packet(0x82, body))
        suback = _read_exactly(self.sock, 5)
        if suback[0] != 0x90 or suback[4] != 1:
            raise RuntimeError(f"subscription to {topic} refused: {suback!r}")

    def publish(self, topic: str, payload: bytes) -> None:
        """QoS 1: returns once the broker has acknowledged it."""
        body = _text(topic) + self.next_id.to_bytes(2, "big") + payload
        self.next_id = self.next_id % 65535 + 1
        self.sock.sendall(_packet(0x32, body))
        if _read_exactly(self.sock, 4)[0] != 0x40:
            raise RuntimeError("no PUBACK")

    def receive(self) -> tuple[str, bytes]:
        """The next PUBLISH (acknowledged at once), skipping nothing else: this client
        sends nothing that is answered while it waits."""
        first = _read_exactly(self.sock, 1)[0]
        length, shift = 0, 0
        while True:
            digit = _read_exactly(self.sock, 1)[0]
            length |= (digit & 0x7F) << shift
            shift += 7
            if not digit & 0x80:
                break
        body = _read_exactly(self.sock, length)
        if first >> 4 != 3:
            raise RuntimeError(f"expected a PUBLISH, got packet type {first >> 4}")
        size = int.from_bytes(body[:2], "big")
        topic, rest = body[2 : 2 + size].decode(), body[2 + size :]
        if (first >> 1) & 3:
            self.sock.sendall(bytes((0x40, 2)) + rest[:2])
            rest = rest[2:]
        return topic, rest

    def close(self) -> None:
        self.sock.close()


def api_call(base: str, method: str, path: str, token: str | None, body: Any = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data, headers, method=method)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def sign_in(base: str, **form: str) -> str:
    data = urllib.parse.urlencode({"grant_type": "password", "username": "admin", **form})
    request = urllib.request.Request(base + "/v2/auth/token", data.encode())
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(json.loads(response.read())["access_token"])


def _site(base: str, devices: int) -> tuple[str, dict[str, Any], str]:
    """An org, `devices` devices each with a small twin, the device measured and a group
    for the durable writes."""
    staff = sign_in(base, password=servers.PASSWORD)
    api_call(base, "POST", "/v2/orgs", staff, {"name": "Twins", "alias": "twins"})
    admin = sign_in(base, password=servers.PASSWORD, scope="twins")
    for n in range(devices - 1):
        made = api_call(base, "POST", "/v2/devices", admin, {"name": f"other-{n}"})["device"]
        path = f"/v2/devices/{made['id']}/twin"
        api_call(base, "PATCH", path, admin, {"desired": {"interval": n}})
    device = api_call(base, "POST", "/v2/devices", admin, {"name": "measured"})["device"]
    group = api_call(base, "POST", "/v2/groups", admin, {"name": "durable"})["group"]["id"]
    return admin, device, str(group)


def _measure(server: servers.Server, port: int, devices: int, padding: int, rounds: int) -> Figures:
    base, pid = server.url, server.pid
    admin, device, group = _site(base, devices)
    login = Login("measured", device["id"], device["api_key"])
    client = Device(port, login)
    namespace = f"{device['root_scope']}/devices/{device['id']}"
    client.subscribe(f"{namespace}/twin/update/delta")
    client.subscribe(f"{namespace}/inbox")
    sender = Device(port, Login("sender", device["id"], device["api_key"]))
    conn = RawHttp(base)
    headers = {"Authorization": f"Bearer {admin}", "Content-Type": "application/json"}
    path = f"/v2/devices/{device['id']}/twin"
    pad = "x" * padding
    twin: list[float] = []
    plain: list[float] = []
    durable: list[float] = []
    cpu_before, mine_before, began = cpu_seconds(pid), time.process_time(), time.monotonic()
    for n in range(rounds):
        body = json.dumps({"desired": {"n": n, "pad": pad}}).encode()
        request = conn.encode("PATCH", path, headers, body)
        start = time.perf_counter()
        conn.send(request)
        topic, _ = client.receive()
        twin.append(time.perf_counter() - start)
        status, _ = conn.answer()
        if status != 200 or not topic.endswith("/twin/update/delta"):
            raise RuntimeError(f"PATCH: {status}, {topic}")
        start = time.perf_counter()
        sender.publish(f"{namespace}/inbox", b'{"n": %d}' % n)
        topic, _ = client.receive()
        plain.append(time.perf_counter() - start)
        if not topic.endswith("/inbox"):
            raise RuntimeError(f"expected the plain message, got {topic}")
        durable.append(_durable_put(conn, headers, f"/v2/groups/{group}/data/n", n, pad))
    wall = time.monotonic() - began
    server_cpu = (cpu_seconds(pid) - cpu_before) / wall
    generator_cpu = (time.process_time() - mine_before) / wall
    conn.close()
    client.close()
    sender.close()
    size = len(json.dumps({"desired": {"n": rounds, "pad": pad}, "reported": {}}))
    return Figures(devices, size, twin, plain, durable, [], server_cpu, generator_cpu)


def _bare(folder: Path, rounds: int, padding: int) -> list[float]:
    """The durable PUT of `_measure`, one at a time, to the bare aiohttp + SQLite handler on
    a copy of the stopped edge's database (its data table, indexes and rows)."""
    source = layout.database_path(folder / "data")
    database = folder / "bare.db"
    for suffix in ("", "-wal"):
        if Path(f"{source}{suffix}").exists():
            shutil.copy(f"{source}{suffix}", f"{database}{suffix}")
    with servers.bare_data(folder, database) as bare:
        conn = RawHttp(bare.url)
        headers = {"Content-Type": "application/json"}
        pad = "x" * padding
        try:
            return [_durable_put(conn, headers, "/data/bare/n", n, pad) for n in range(rounds)]
        finally:
            conn.close()


def _durable_put(conn: RawHttp, headers: dict[str, str], path: str, n: int, pad: str) -> float:
    request = conn.encode(
        "PUT", path, headers, json.dumps({"value": {"n": n, "pad": pad}}).encode()
    )
    start = time.perf_counter()
    conn.send(request)
    status, _ = conn.answer()
    took = time.perf_counter() - start
    if status != 200:
        raise RuntimeError(f"PUT data: {status}")
    return took


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(rounds: int, large: int) -> list[Figures]:
    found = []
    for devices, padding in ((10, 16), (large, 6000)):
        with tempfile.TemporaryDirectory(prefix="edge-bench-twins-") as folder:
            env = servers.mqtt_ports()
            with servers.edge(Path(folder), env) as server:
                port = int(env["EDGE_MQTT_PORT"])
                figures = _measure(server, port, devices, padding, rounds)
            figures = replace(figures, bare=_bare(Path(folder), rounds, padding))
        found.append(figures)
        _print(figures)
    return found


def _print(f: Figures) -> None:
    ms = 1000.0
    print(
        f"{f.devices} devices, twin of {f.document_bytes} bytes, {len(f.twin)} rounds:"
        f" twin delta p50 {statistics.median(f.twin) * ms:.2f} ms,"
        f" p99 {p(f.twin, 0.99) * ms:.2f} ms; plain publish p50"
        f" {statistics.median(f.plain) * ms:.2f} ms, p99 {p(f.plain, 0.99) * ms:.2f} ms;"
        f" p99 ratio {p(f.twin, 0.99) / p(f.plain, 0.99):.2f}x (target <= {TARGET:g}x);"
        f" durable data PUT p50 {statistics.median(f.durable) * ms:.2f} ms,"
        f" p99 {p(f.durable, 0.99) * ms:.2f} ms;"
        f" bare aiohttp + SQLite durable PUT p50 {statistics.median(f.bare) * ms:.2f} ms,"
        f" p99 {p(f.bare, 0.99) * ms:.2f} ms;"
        f" {out.cpu(f.server_cpu, f.generator_cpu)}",
        flush=True,
    )


def as_rows(found: list[Figures], line: str) -> list[out.Row]:
    rows = []
    for f in found:
        label = f"twin delta round trip, {f.devices} devices, {f.document_bytes} B twin"
        load = out.cpu(f.server_cpu, f.generator_cpu)
        for name, q in (("p50", 0.5), ("p99", 0.99)):
            twin = p(f.twin, q) * 1000
            for reference, values in (
                ("plain MQTT publish to the same client", f.plain),
                ("durable data PUT (HTTP and commit, no MQTT)", f.durable),
                ("bare aiohttp + SQLite durable PUT (the stack's floor)", f.bare),
            ):
                target = name == "p99" and values is f.plain
                rows.append(
                    out.Row(
                        f"{label}, {name}",
                        twin,
                        "ms",
                        f"{reference}, {name}",
                        p(values, q) * 1000,
                        floor=1 / TARGET if target else None,
                        lower_is_better=True,
                        load=load,
                        command=line,
                    )
                )
    return rows


def rows(quick: bool) -> list[out.Row]:
    rounds, large = (200, 100) if quick else (1000, 1000)
    line = out.command("bench.twins", "--rounds", rounds, "--devices", large)
    return as_rows(run(rounds, large), line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--devices", type=int, default=1000, help="devices at the large size")
    args = parser.parse_args()
    run(args.rounds, args.devices)


if __name__ == "__main__":
    main()
