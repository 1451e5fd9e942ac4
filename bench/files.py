"""Files throughput: presigned uploads and downloads beside the disk's and MD5's ceilings.

One run, one disk: `edge serve` in its own process with its data folder next to the
baselines' files. Big transfers go through `curl` (native: the client is not the
bottleneck) to and from the presigned URLs (parts in sequence through one curl, on one
connection; parts at once through a curl each); `dd conv=fsync` is the ceiling of a durable
copy (and `dd conv=fsync` of each part in turn, of a copy made durable piece by piece, as
a multipart upload's parts must be), MD5 over the same bytes (hashlib, as the server uses)
the ceiling of an upload, which must hash every byte; a bare server that answers with one
`socket.sendfile` of the file (a thread of the bench) is what a download over loopback to
curl comes to with no framework at all. The rows take turns, one round after another,
and show the CPU the server and curl spent per second of transfer (a client near 100% is
the limit). The server's RSS is sampled from /proc during each transfer and shown above
its idle RSS.
Many small files: PUT for a URL plus the upload, over aiohttp at a fixed concurrency,
against the same number of 4 KiB writes with fsync; the server's CPU share says whether
it was the bottleneck.

Usage: python -m bench.files [--size-mib 256] [--parts 8] [--small 10000] [--concurrency 16]
[--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import aiohttp

from bench import rows as out
from bench.http_requests import PASSWORD, free_port, start, wait_ready
from bench.servers import mqtt_ports

MIB = 1024 * 1024
SMALL = 4096
BARE = "bare sendfile server, no framework"


@dataclass
class Row:
    name: str
    seconds: float
    size: int
    rss: float | None = None  # MiB above idle
    server_cpu: float | None = None  # CPU seconds per second of transfer
    client_cpu: float | None = None  # the same for curl (or dd)

    @property
    def mbps(self) -> float:
        return self.size / self.seconds / 1e6


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    """CPU seconds of the bench's finished child processes (curl, dd) so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


@contextmanager
def bare_sender(path: Path) -> Iterator[str]:
    """A URL answered with the file through one blocking `socket.sendfile`: no framework,
    no event loop, the most loopback and curl allow. One connection at a time."""
    listener = socket.create_server(("127.0.0.1", 0))
    header = f"HTTP/1.1 200 OK\r\nContent-Length: {path.stat().st_size}\r\n"
    header += "Connection: close\r\n\r\n"

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn, path.open("rb") as handle:
                while b"\r\n\r\n" not in conn.recv(65536):
                    pass
                conn.sendall(header.encode())
                conn.sendfile(handle)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/file"
    finally:
        listener.close()


@contextmanager
def peak_rss(pid: int) -> Iterator[list[float]]:
    """Sample the process's RSS every 5 ms while the block runs; yields [peak]."""
    peak, stop = [rss_mib(pid)], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], rss_mib(pid))
            time.sleep(0.005)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        stop.set()
        thread.join()


def machine() -> str:
    """How busy the box is: figures from a shared machine are only as steady as it is."""
    load = os.getloadavg()[0]
    try:
        pressure = Path("/proc/pressure/cpu").read_text().split()[1].split("=")[1]
    except (OSError, IndexError):
        pressure = "?"
    return f"load average {load:.1f} on {os.cpu_count()} cores, CPU pressure {pressure}%"


def timed(command: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def curl_put(url: str, source: Path) -> list[str]:
    return ["curl", "-sS", "--fail", "-o", "/dev/null", "-T", str(source), url]


def curl_puts(sends: list[tuple[str, Path]]) -> list[str]:
    """Uploads one after another through one curl on one connection, as a client sends the
    parts of a file in sequence: a curl started for each part would add its start-up and
    a new connection (13 ms a part on the project machine) to what is timed, time in which
    the server waits for the client."""
    command = ["curl", "-sS", "--fail", "--fail-early"]
    for url, source in sends:
        command += ["-o", "/dev/null", "-T", str(source), url]
    return command


def curl_get(url: str) -> list[str]:
    return ["curl", "-sS", "--fail", "-o", "/dev/null", url]


def make_source(path: Path, size: int) -> None:
    with path.open("wb") as out:
        for _ in range(size // MIB):
            out.write(os.urandom(MIB))


def md5_seconds(path: Path) -> float:
    digest = hashlib.md5()
    began = time.perf_counter()
    with path.open("rb") as handle:
        while chunk := handle.read(MIB):
            digest.update(chunk)
    return time.perf_counter() - began


def small_writes(folder: Path, count: int) -> float:
    """`count` files of 4 KiB, each written and fsynced, one after another."""
    folder.mkdir()
    data = os.urandom(SMALL)
    began = time.perf_counter()
    for n in range(count):
        fd = os.open(folder / f"{n}", os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, data)
        os.fsync(fd)
        os.close(fd)
    return time.perf_counter() - began


class Edge:
    """A running `edge serve` with a staff session scoped to a bench org and one group."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = start(
            ["-m", "edge", "serve", "--data-dir", str(folder), "--port", str(self.port)]
            + ["--log-level", "warning"],
            {"EDGE_ADMIN_PASSWORD": PASSWORD, **mqtt_ports()},
        )
        self.auth: dict[str, str] = {}
        self.files = ""

    async def prepare(self) -> None:
        await wait_ready(f"{self.base}/v2/health")
        async with aiohttp.ClientSession(self.base) as session:
            form = {"grant_type": "password", "username": "admin", "password": PASSWORD}
            async with session.post("/v2/auth/token", data=form) as response:
                staff = {"Authorization": f"Bearer {(await response.json())['access_token']}"}
            body = {"name": "Bench", "alias": "bench"}
            async with session.post("/v2/orgs", json=body, headers=staff) as response:
                assert response.status == 201
            async with session.post("/v2/auth/token", data={**form, "scope": "bench"}) as r:
                self.auth = {"Authorization": f"Bearer {(await r.json())['access_token']}"}
            async with session.post("/v2/groups", json={"name": "G"}, headers=self.auth) as r:
                self.files = f"/v2/groups/{(await r.json())['group']['id']}/files"

    async def call(self, method: str, path: str, body: dict[str, object] | None = None) -> dict:  # type: ignore[type-arg]
        async with aiohttp.ClientSession(self.base) as session:
            async with session.request(method, path, json=body, headers=self.auth) as response:
                assert response.status == 200, await response.text()
                return await response.json()  # type: ignore[no-any-return]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


async def big_files(edge: Edge, work: Path, size: int, parts: int, rounds: int) -> list[Row]:
    """Every input is written and synced before anything is timed, so no transfer competes
    with the write-back of the bench's own files. The rows take turns, round after round,
    so that each sees the disk as the others do (its speed drifts by a third over minutes
    on a shared machine, and rows timed one after the other would compare different
    disks); each row is its best round, its RSS the highest seen."""
    source = work / "source.bin"
    make_source(source, size)
    pieces = split(source, work, size, parts)
    os.sync()
    idle = rss_mib(edge.process.pid)

    async def dd(n: int) -> float:
        return timed(dd_copy(source, work / "dd.bin"))

    async def dd_pieces(n: int) -> float:
        began = time.perf_counter()
        for piece in pieces:
            subprocess.run(dd_copy(piece, work / f"dd-{piece.name}"), check=True)
        return time.perf_counter() - began

    async def md5(n: int) -> float:
        return md5_seconds(source)

    async def single(n: int) -> float:
        url = (await edge.call("PUT", f"{edge.files}/single{n}.bin", {}))["url"]
        return timed(curl_put(url, source))

    async def one_by_one(n: int) -> float:
        return await multipart_upload(edge, f"serial{n}.bin", pieces, parallel=False)

    async def at_once(n: int) -> float:
        return await multipart_upload(edge, f"multi{n}.bin", pieces, parallel=True)

    async def fetch(name: str) -> float:
        url = (await edge.call("GET", f"{edge.files}/{name}?url_only=true"))["url"]
        return timed(curl_get(url))

    async def bare(n: int) -> float:
        with bare_sender(source) as url:
            return timed(curl_get(url))

    runs: list[tuple[str, Callable[[int], Awaitable[float]], bool]] = [
        ("dd conv=fsync (copy ceiling)", dd, False),
        ("MD5 over the bytes (upload ceiling)", md5, False),
        (f"dd conv=fsync, {parts} pieces one after another", dd_pieces, False),
        (BARE, bare, False),
        ("upload, single part", single, True),
        ("download, single-part file", lambda n: fetch("single0.bin"), True),
        (f"upload, {parts} parts one after another + complete", one_by_one, True),
        (f"upload, {parts} parts at once + complete", at_once, True),
        (f"download, {parts}-part file", lambda n: fetch("multi0.bin"), True),
    ]
    best = [Row(name, float("inf"), size) for name, _, _ in runs]
    highest = [0.0] * len(runs)
    pid = edge.process.pid
    for n in range(rounds):
        for index, (name, run, server) in enumerate(runs):
            server_cpu, client_cpu = cpu_seconds(pid), children_cpu()
            with peak_rss(pid) as peak:
                seconds = await run(n)
            highest[index] = max(highest[index], peak[0])
            if seconds < best[index].seconds:
                served = (cpu_seconds(pid) - server_cpu) / seconds if server else None
                best[index] = Row(
                    name, seconds, size, None, served, (children_cpu() - client_cpu) / seconds
                )
    return [
        replace(row, rss=highest[i] - idle if server else None)
        for i, (row, (_, _, server)) in enumerate(zip(best, runs, strict=True))
    ]


def dd_copy(source: Path, target: Path) -> list[str]:
    return ["dd", f"if={source}", f"of={target}", "bs=1M", "conv=fsync", "status=none"]


def split(source: Path, work: Path, size: int, parts: int) -> list[Path]:
    pieces = []
    with source.open("rb") as handle:
        for n in range(parts):
            piece = work / f"part{n + 1}"
            piece.write_bytes(handle.read(size // parts))
            pieces.append(piece)
    return pieces


async def multipart_upload(edge: Edge, name: str, pieces: list[Path], parallel: bool) -> float:
    """Start, send the parts (all at once, each through its own curl; or one after another
    through one curl), complete."""
    parts = len(pieces)
    started = await edge.call("PUT", f"{edge.files}/{name}", {"num_parts": parts})
    sends = list(zip(started["urls"], pieces, strict=True))
    began = time.perf_counter()
    commands = [curl_put(url, piece) for url, piece in sends] if parallel else [curl_puts(sends)]
    running = [subprocess.Popen(c, stdout=subprocess.DEVNULL) for c in commands]
    assert all(p.wait() == 0 for p in running)
    done = {"completed_upload_id": started["upload_id"], "num_parts": parts}
    await edge.call("PUT", f"{edge.files}/{name}", done)
    return time.perf_counter() - began


async def small_files(edge: Edge, count: int, concurrency: int) -> float:
    data = os.urandom(SMALL)
    queue = iter(range(count))

    async def worker(session: aiohttp.ClientSession) -> None:
        for n in queue:
            where = f"{edge.files}/small/{n % 100}/{n}.bin"
            async with session.put(where, json={}, headers=edge.auth) as response:
                url = (await response.json())["url"]
            async with session.put(url, data=data) as response:
                assert response.status == 200, await response.text()

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(edge.base, connector=connector) as session:
        began = time.perf_counter()
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        return time.perf_counter() - began


def print_big(rows: list[Row]) -> None:
    dd, md5 = rows[0].mbps, rows[1].mbps
    head = f"{'vs dd':>7} {'vs MD5':>7} {'RSS +MiB':>9} {'srv CPU':>8} {'curl CPU':>8}"
    print(f"{'transfer':44} {'MB/s':>8} {head}")
    for row in rows:
        rss = f"{row.rss:9.1f}" if row.rss is not None else f"{'':9}"
        vs_md5 = f"{row.mbps / md5:6.2f}x" if row.name.startswith("upload") else f"{'':7}"
        cpu = f"{_share(row.server_cpu):>8} {_share(row.client_cpu):>8}"
        print(f"{row.name:44} {row.mbps:8.0f} {row.mbps / dd:6.2f}x {vs_md5} {rss} {cpu}")


def _share(cpu: float | None) -> str:
    return "" if cpu is None else f"{cpu * 100:.0f}%"


async def run(
    size_mib: int, parts: int, small: int, concurrency: int, rounds: int
) -> list[out.Row]:
    work = Path(tempfile.mkdtemp(prefix="edge-files-bench-"))
    edge = Edge(work / "edge")
    try:
        await edge.prepare()
        print(
            f"command: {' '.join([Path(sys.executable).name, '-m', 'bench.files', *sys.argv[1:]])}"
        )
        print(f"{size_mib} MiB through presigned URLs, curl on loopback, one disk ({work})")
        print(f"machine before: {machine()}")
        print(f"best of {rounds} rounds per row, the rows in turn\n")
        big = await big_files(edge, work, size_mib * MIB, parts, rounds)
        print_big(big)
        baseline = small_writes(work / "small", small)
        cpu = cpu_seconds(edge.process.pid)
        seconds = await small_files(edge, small, concurrency)
        busy = (cpu_seconds(edge.process.pid) - cpu) / seconds
        print(f"\n{small} files of 4 KiB, concurrency {concurrency}")
        print(f"{'writer':42} {'files/s':>8} {'ratio':>7}")
        found = as_rows(big, size_mib)
        print(f"{'4 KiB write + fsync, one after another':42} {small / baseline:8.0f} {1:6.2f}x")
        ratio = baseline / seconds
        print(f"{'edge: PUT for a URL + upload':42} {small / seconds:8.0f} {ratio:6.2f}x")
        print(f"edge server CPU during the small files: {busy * 100:.0f}% of one core")
        print(f"machine after: {machine()}")
        found.append(
            out.Row(
                f"{small:,} files of 4 KiB: PUT for a URL + upload, {concurrency} at once",
                small / seconds,
                "files/s",
                "4 KiB write + fsync, one after another",
                small / baseline,
                load=f"srv {busy * 100:.0f}%",
            )
        )
        return found
    finally:
        edge.stop()
        shutil.rmtree(work, ignore_errors=True)


def as_rows(big: list[Row], size_mib: int) -> list[out.Row]:
    """Uploads beside MD5 over the same bytes (target: half its rate at least); downloads
    beside dd (target: 0.8x) and beside the bare sendfile server (how much of what loopback
    and curl allow edge gets); the disk's own cost of writing the file as durable pieces
    (dd of each part, beside dd of the whole)."""
    dd, md5, bare = big[0], big[1], next(row for row in big if row.name == BARE)
    found = []
    for row in big[2:]:
        if row is bare:
            continue
        upload = row.name.startswith("upload")
        rss = f" (server RSS +{row.rss:.0f} MiB)" if row.rss is not None else ""
        references = [(md5, 0.5)] if upload else [(dd, None)]
        if row.name.startswith("download"):
            references = [(dd, 0.8), (bare, None)]
        for reference, floor in references:
            found.append(
                out.Row(
                    f"files: {row.name}, {size_mib} MiB{rss}",
                    row.mbps,
                    "MB/s",
                    reference.name,
                    reference.mbps,
                    floor=floor,
                    load=_load(row),
                )
            )
    return found


def _load(row: Row) -> str:
    if row.server_cpu is None:
        return ""
    return f"srv {_share(row.server_cpu)} / curl {_share(row.client_cpu)}"


def rows(quick: bool) -> list[out.Row]:
    """48 MiB (8 parts of 6 MiB: a part is 5 MiB at least) and 1,000 small files, one
    round, quick; 256 MiB, 10,000 and 5 rounds in full."""
    size, small, rounds = (48, 1000, 1) if quick else (256, 10_000, 5)
    found = asyncio.run(run(size, 8, small, 16, rounds))
    line = out.command("bench.files", "--size-mib", size, "--small", small, "--rounds", rounds)
    return [replace(r, command=line) for r in found]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--parts", type=int, default=8)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(run(args.size_mib, args.parts, args.small, args.concurrency, args.rounds))


if __name__ == "__main__":
    main()
