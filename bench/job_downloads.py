"""A firmware artifact fetched by many devices at once (bench/jobs.py), beside nginx.

`edge serve` runs in its own process with a file of SIZE MiB (random bytes) in a group's
files store, and a job over DEVICES devices names it as its artifact. Each device reads
its execution over HTTP with its own API key (`GET /v2/devices/{id}/jobs/{job_id}`) and
takes the presigned URL of `document.artifact` (a URL per device, checked by the files
room as any presigned URL is). Then, in turns, ROUNDS times, the best of each:

- edge: DEVICES `curl` processes started at once, each fetching its device's URL;
- nginx (Debian's package, `make bench-tools`), started here on a free loopback port with
  a config file in a temporary folder (its Debian defaults otherwise: a worker per core,
  sendfile on), serving the same bytes: DEVICES `curl` fetching the same file at once.

The figure is the aggregate throughput, DEVICES x SIZE over the wall time from the first
curl's start to the last one's end; every curl must have received SIZE bytes. The CPU
column: the server's share of a core (nginx's master and workers together) beside the
curls'. Target: edge at least 0.8x of nginx.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench import servers
from bench.files import MIB, children_cpu, cpu_seconds, make_source
from bench.job_rollout import Timed
from bench.rows import Skipped
from bench.twin_fleet import Member
from bench.twins import api_call, sign_in

NGINX = "/usr/sbin/nginx"
NGINX_CONFIG = """
worker_processes auto;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
daemon off;
events {{ worker_connections 1024; }}
http {{
    sendfile on;
    access_log off;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    types {{ application/octet-stream bin; }}
    server {{
        listen 127.0.0.1:{port};
        root {root};
    }}
}}
"""


def nginx_path() -> str:
    if os.path.exists(NGINX):
        return NGINX
    found = shutil.which("nginx")
    if found is None:
        raise Skipped("nginx not found: `make bench-tools` installs it (apt-get install nginx)")
    return found


@contextmanager
def nginx(folder: Path, served: Path) -> Iterator[tuple[str, list[int]]]:
    """nginx serving `served`'s folder: (the file's URL, its master's and workers' PIDs)."""
    port = servers.free_port()
    config = folder / "nginx.conf"
    text = NGINX_CONFIG.format(folder=folder, port=port, root=served.parent)
    config.write_text(text)
    for path in (folder, served.parent):
        path.chmod(0o755)  # the workers run as another user when started by root
    served.chmod(0o644)
    log = (folder / "nginx.out").open("wb")
    process = subprocess.Popen(
        [nginx_path(), "-p", str(folder), "-c", str(config)], stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}/{served.name}"
    try:
        servers._wait_healthy(url, process)
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        yield url, [process.pid, *map(int, children)]
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def fetch_all(urls: list[str], size: int, pids: list[int]) -> Timed:
    """Every URL fetched at once by its own curl: the megabytes (10^6 bytes) of all."""
    server, client, began = sum(map(cpu_seconds, pids)), children_cpu(), time.perf_counter()
    command = ["curl", "-sS", "--fail", "-o", "/dev/null", "-w", "%{size_download}"]
    running = [subprocess.Popen([*command, url], stdout=subprocess.PIPE) for url in urls]
    received = [int(p.communicate()[0] or 0) for p in running]
    seconds = time.perf_counter() - began
    if any(p.returncode != 0 for p in running) or set(received) != {size}:
        raise RuntimeError(f"a download failed: {received[:5]} bytes of {size}")
    server_cpu = (sum(map(cpu_seconds, pids)) - server) / seconds
    client_cpu = (children_cpu() - client) / seconds
    return Timed(len(urls) * size / 1e6, seconds, server_cpu, client_cpu)


def device_urls(base: str, size: int, devices: int, source: Path) -> list[str]:
    """The site: an org, a group holding the file, DEVICES devices, a job naming the file as
    its artifact; each device's URL, as the device reads it."""
    staff = sign_in(base, password=servers.PASSWORD)
    api_call(base, "POST", "/v2/orgs", staff, {"name": "Firmware", "alias": "firmware"})
    admin = sign_in(base, password=servers.PASSWORD, scope="firmware")
    group = api_call(base, "POST", "/v2/groups", admin, {"name": "Builds"})["group"]["id"]
    upload = api_call(base, "PUT", f"/v2/groups/{group}/files/fw.bin", admin, {})["url"]
    subprocess.run(
        ["curl", "-sS", "--fail", "-o", "/dev/null", "-T", str(source), upload], check=True
    )
    members = []
    for n in range(devices):
        made = api_call(base, "POST", "/v2/devices", admin, {"name": f"pump-{n}"})["device"]
        members.append(Member(made["id"], made["api_key"], made["root_scope"]))
    body = {
        "document": {"operation": "firmware"},
        "targets": {"device_ids": [m.id for m in members]},
        "artifact": {"group_id": group, "path": "fw.bin"},
    }
    job = api_call(base, "POST", "/v2/jobs", admin, body)["job"]
    if job["artifact"]["size"] != size:
        raise RuntimeError("the artifact is not the file uploaded")
    return [_artifact_url(base, member, job["id"]) for member in members]


def _artifact_url(base: str, member: Member, job_id: str) -> str:
    """The device's URL, once the scheduler has released its execution."""
    deadline = time.monotonic() + 30
    while True:
        pending = api_call(base, "GET", f"/v2/devices/{member.id}/jobs", member.key)["jobs"]
        if any(j["job_id"] == job_id for j in pending):
            path = f"/v2/devices/{member.id}/jobs/{job_id}"
            return str(
                api_call(base, "GET", path, member.key)["execution"]["document"]["artifact"]["url"]
            )
        if time.monotonic() > deadline:
            raise RuntimeError("the job was never released")
        time.sleep(0.1)


def run(size_mib: int, devices: int, rounds: int) -> tuple[Timed, Timed]:
    """(edge, nginx): each the best of `rounds`, taken in turns."""
    size = size_mib * MIB
    with tempfile.TemporaryDirectory(prefix="edge-bench-artifact-") as work:
        folder = Path(work)
        (folder / "www").mkdir()
        source = folder / "www" / "fw.bin"
        make_source(source, size)
        with servers.edge(folder / "edge") as server, nginx(folder, source) as (url, pids):
            urls = device_urls(server.url, size, devices, source)
            edge, reference = [], []
            for _ in range(rounds):
                edge.append(fetch_all(urls, size, [server.pid]))
                reference.append(fetch_all([url] * devices, size, pids))
    best = max(edge, key=lambda t: t.rate), max(reference, key=lambda t: t.rate)
    print(
        f"{devices} devices fetching a {size_mib} MiB artifact at once: edge"
        f" {best[0].rate:,.0f} MB/s ({best[0].load()}), nginx {best[1].rate:,.0f} MB/s"
        f" ({best[1].load()}): {best[0].rate / best[1].rate:.2f}x (target >= 0.8x)",
        flush=True,
    )
    return best
