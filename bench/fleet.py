"""A fleet connected (#29): N devices connected as raw MQTT clients in processes of their
own, U of them publishing an update a second; the HTTP token GET rate (wrk) beside the same
GET with no device connected, in the same run (target: at least 0.7x), and the server's RSS
per connected device.

Each update is a publish on `--topic` (default the twin update topic,
`<root>/devices/<id>/twin/update` with `{"reported": {...}}`: until twins exist it is an
ordinary publish in the device's own namespace, which no one is subscribed to).

    python -m bench.fleet --devices 1000 --updating 200 --seconds 10
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench import fleet_load
from bench import rows as out
from bench.http_requests import free_port
from bench.mqtt import (
    PASSWORD,
    SCOPES,
    _post_form,
    _post_json,
    _wait_port,
    _wrk,
    cpu_seconds,
    ctx,
    prepare,
    rss_mib,
)
from bench.mqtt_load import Login
from bench.servers import UNBOUNDED, edge_command

TOPIC = "{root}/devices/{id}/twin/update"
PROCESSES = 4


@contextmanager
def serve(data: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, int]]:
    """`edge serve` (the venv's) with room for the fleet: (process, HTTP port, MQTT port)."""
    http, port = free_port(), free_port()
    command = [*edge_command(), "serve", "--data-dir", str(data), "--port", str(http)]
    command += ["--mqtt-port", str(port), "--mqtt-tls-port", "0", "--mqtt-ws-port", "0"]
    command += ["--mqtt-wss-port", "0", "--log-level", "warning"]
    command += ["--mqtt-max-connections", "20000"]
    env = {**os.environ, "EDGE_ADMIN_PASSWORD": PASSWORD, **UNBOUNDED}  # all from one address
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=sys.stderr)
    try:
        _wait_port(http)
        yield process, http, port
    finally:
        process.terminate()
        process.wait(60)


def make_fleet(base: str, count: int) -> tuple[str, str, list[Login]]:
    """(org ID, an org admin's token, the devices' logins), made through the HTTP API."""
    form = {"grant_type": "password", "username": "admin", "password": PASSWORD}
    staff = _post_form(f"{base}/v2/auth/token", form)["access_token"]
    org_id = _post_json(f"{base}/v2/orgs", staff, {"name": "Fleet", "alias": "fleet"})["org"]["id"]
    token = _post_form(f"{base}/v2/auth/token", {**form, "scope": "fleet"})["access_token"]
    logins = []
    for i in range(count):
        body = {"name": f"fleet-{i}", "iot_scopes": SCOPES}
        made = _post_json(f"{base}/v2/devices", token, body)["device"]
        logins.append(Login(made["id"], made["id"], made["api_key"]))
    return org_id, token, logins


def measure(count: int, updating: int, seconds: float, topic: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="edge-fleet-") as tmp:
        data = prepare(Path(tmp))
        with serve(data) as (process, http, port):
            org_id, token, logins = make_fleet(f"http://127.0.0.1:{http}", count)
            url = f"http://127.0.0.1:{http}/v2/orgs/{org_id}"
            _wrk(url, token, 2)  # warm-up: the first run otherwise pays for caches filling
            idle = _wrk(url, token, seconds)
            rss_before = rss_mib(process.pid)
            topics = [topic.format(root=org_id, id=login.client_id) for login in logins]
            ready, stop = ctx.Semaphore(0), ctx.Event()
            shares = [range(i, count, PROCESSES) for i in range(PROCESSES)]
            per = [min(len(s), -(-updating // PROCESSES)) for s in shares]
            procs = [
                ctx.Process(
                    target=fleet_load.devices,
                    args=(
                        port,
                        [logins[i] for i in share],
                        [topics[i] for i in share],
                        n,
                        ready,
                        stop,
                    ),
                )
                for share, n in zip(shares, per, strict=True)
            ]
            for proc in procs:
                proc.start()
            try:
                for _ in procs:
                    if not ready.acquire(timeout=300):
                        raise RuntimeError("the fleet did not connect")
                time.sleep(2.0)
                rss_after = rss_mib(process.pid)
                cpu_before, began = cpu_seconds(process.pid), time.monotonic()
                busy = _wrk(url, token, seconds)
                server_cpu = (cpu_seconds(process.pid) - cpu_before) / (time.monotonic() - began)
            finally:
                stop.set()
                for proc in procs:
                    proc.join(30)
    return {
        "idle": idle,
        "busy": busy,
        "rss_kib_per_device": (rss_after - rss_before) * 1024 / count,
        "server_cpu": server_cpu,
    }


def rows(quick: bool) -> list[out.Row]:
    seconds = 5.0 if quick else 10.0
    found = []
    for count, updating in ((100, 20), (1000, 200)):
        got = measure(count, updating, seconds, TOPIC)
        print(f"{count} devices ({updating} updating/s): {got}", flush=True)
        cmd = out.command("bench.fleet", "--devices", count, "--updating", updating)
        found += [
            out.Row(
                f"HTTP token GET, {count} devices connected, {updating} updating/s",
                got["busy"],
                "req/s",
                "the same GET, no device connected",
                got["idle"],
                floor=0.7,
                load=f"srv {got['server_cpu'] * 100:.0f}% during the busy run",
                command=cmd,
            ),
            out.Row(
                f"server RSS per connected device ({count} devices)",
                got["rss_kib_per_device"],
                "KiB",
                lower_is_better=True,
                command=cmd,
            ),
        ]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--updating", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--topic", default=TOPIC, help="{root} and {id} are replaced")
    args = parser.parse_args()
    got = measure(args.devices, args.updating, args.seconds, args.topic)
    ratio = got["busy"] / got["idle"]
    print(f"HTTP token GET: idle {got['idle']:.0f} req/s, with the fleet {got['busy']:.0f} req/s")
    print(f"ratio {ratio:.2f} (target >= 0.7); server CPU {got['server_cpu'] * 100:.0f}%")
    print(f"server RSS per connected device: {got['rss_kib_per_device']:.1f} KiB")


if __name__ == "__main__":
    main()
