"""The soak's load generators (bench/soak.py runs them): each paced to a fixed rate, each
counting what failed.

- HTTP: wrk (native, one thread) with a Lua script that picks each request from a weighted
  mix and waits between requests on a connection (wrk's `delay()`), so the rate is bounded
  rather than as fast as the server answers. It runs in segments of one report interval,
  and each segment prints its count, latency percentiles and errors.
- MQTT: processes of paho devices (bench/mqtt_load.py's select loop, no thread per client),
  each publishing QoS 1 at a fixed rate and counting PUBACKs, failed publishes and
  disconnections; one more device subscribes to all their topics and counts what arrives.
- Files and tunnel streams: asyncio tasks in the soak's own process (a few operations a
  second: a Python client is not the limit there), recording each operation's time.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import select
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench import tunnels
from bench.mqtt_load import PAYLOAD, Login, make, subscribe
from bench.wrk import ensure_installed

# Shared MQTT counters, per device process: published, acknowledged, failed, disconnected.
PUBLISHED, ACKED, FAILED, DROPPED = range(4)
SLOTS = 4


@dataclass(frozen=True)
class Request:
    weight: int
    method: str
    path: str  # "%d" is replaced by a random entry number below `spread`
    token: str
    body: str | None = None
    spread: int = 0
    form: bool = False


@dataclass(frozen=True)
class Segment:
    """One wrk run: requests, seconds, errors by kind, latency percentiles (ms)."""

    requests: int
    seconds: float
    errors: int
    p50_ms: float
    p99_ms: float

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def _lua(text: str) -> str:
    if "]==]" in text:
        raise ValueError("text cannot be quoted for Lua")
    return f"[==[{text}]==]"


def script(requests: Sequence[Request], connections: int, rate: float) -> str:
    """A wrk script: a weighted mix at about `rate` requests per second in all."""
    delay_ms = max(1, round(connections * 1000 / rate))
    entries = []
    for r in requests:
        content = "application/x-www-form-urlencoded" if r.form else "application/json"
        body = _lua(r.body) if r.body is not None else "nil"
        entries.append(
            f"  {{w={r.weight}, m={_lua(r.method)}, p={_lua(r.path)}, n={r.spread},"
            f" a={_lua('Bearer ' + r.token) if r.token else 'nil'}, b={body},"
            f" c={_lua(content)}}},"
        )
    return LUA.replace("ENTRIES", "\n".join(entries)).replace("DELAY", str(delay_ms))


LUA = """
local mix = {
ENTRIES
}
local total = 0
for _, r in ipairs(mix) do total = total + r.w end
function init(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
end
function request()
  local pick = math.random() * total
  for _, r in ipairs(mix) do
    pick = pick - r.w
    if pick <= 0 then
      local path = r.p
      if r.n > 0 then path = string.format(r.p, math.random(0, r.n - 1)) end
      local headers = {}
      if r.a then headers["Authorization"] = r.a end
      if r.b then headers["Content-Type"] = r.c end
      return wrk.format(r.m, path, headers, r.b)
    end
  end
end
function delay()
  return DELAY
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("EDGE-SOAK %d %d %d %d %d %d %d %d %d\\n",
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


def start_wrk(url: str, lua: Path, connections: int, seconds: int) -> subprocess.Popen[str]:
    command = [ensure_installed(), "-t1", f"-c{connections}", f"-d{seconds}s"]
    command += ["--timeout", "10s", "-s", str(lua), url]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_wrk(process: subprocess.Popen[str]) -> Segment:
    """Wait for a segment's wrk and read its summary (a wrk that failed is a segment with
    one error, so the soak fails rather than stops)."""
    out, _ = process.communicate()
    for line in out.splitlines():
        if line.startswith("EDGE-SOAK "):
            count, micros, *errors, p50, p99 = (int(x) for x in line.split()[1:])
            return Segment(count, micros / 1e6, sum(errors), p50 / 1000, p99 / 1000)
    return Segment(0, 0.0, 1, 0.0, 0.0)


# MQTT


def devices(
    port: int,
    logins: Sequence[Login],
    topics: Sequence[str],
    rate: float,
    counts: Any,
    slot: int,
    ready: Any,
    stop: Any,
) -> None:
    """Each client publishes a QoS 1 message to its topic `rate` times a second."""
    tally = [0] * SLOTS

    def acked(*_: Any) -> None:
        tally[ACKED] += 1

    def dropped(*_: Any) -> None:
        tally[DROPPED] += 1

    clients = [make(port, login) for login in logins]
    for client in clients:
        client.on_publish, client.on_disconnect = acked, dropped
    ready.release()
    sockets = {client.socket(): client for client in clients}
    interval, began, tick = 1.0 / rate, time.monotonic(), 0
    while not stop.is_set():
        tick += 1
        for client, topic in zip(clients, topics, strict=True):
            tally[PUBLISHED] += 1
            if client.publish(topic, PAYLOAD, 1).rc != 0:
                tally[FAILED] += 1
        _pump(sockets, began + tick * interval)
        for client in clients:
            client.loop_misc()
        counts[slot * SLOTS : (slot + 1) * SLOTS] = tally
    _pump(sockets, time.monotonic() + 2.0)  # the last PUBACKs
    counts[slot * SLOTS : (slot + 1) * SLOTS] = tally


def _pump(sockets: dict[Any, Any], until: float) -> None:
    while (left := until - time.monotonic()) > 0:
        live = [sock for sock in sockets if sock.fileno() >= 0]  # a dropped one is counted
        readable, _, _ = select.select(live, [], [], left)
        for sock in readable:
            sockets[sock].loop_read()


def listener(
    port: int,
    logins: Sequence[Login],
    topics: Sequence[str],
    counts: Any,
    slot: int,
    ready: Any,
    stop: Any,
) -> None:
    """Clients subscribed (QoS 1) to the devices' topics, a share each (the broker drops a
    client that lets too many messages wait, so a busy machine is survived for longer):
    counts what arrives."""
    tally = [0] * SLOTS

    def received(*_: Any) -> None:
        tally[ACKED] += 1

    def dropped(*_: Any) -> None:
        tally[DROPPED] += 1

    clients = [make(port, login) for login in logins]
    for client, topic in zip(clients, topics, strict=True):
        subscribe(client, topic, 1)
        client.on_message, client.on_disconnect = received, dropped
    ready.release()
    sockets = {client.socket(): client for client in clients}
    while not stop.is_set() and not tally[DROPPED]:  # a dropped listener is an error, and done
        readable, _, _ = select.select(list(sockets), [], [], 0.05)
        for sock in readable:
            client = sockets[sock]
            for _ in range(256):  # paho reads one packet a call
                before = tally[ACKED]
                client.loop_read()
                if tally[ACKED] == before:
                    break
        for client in clients:
            if client.want_write():
                client.loop_write()
            client.loop_misc()
        counts[slot * SLOTS : (slot + 1) * SLOTS] = tally
    counts[slot * SLOTS : (slot + 1) * SLOTS] = tally


# Files and tunnel streams, in the soak's own event loop


@dataclass
class Operations:
    """Operations of one kind done since the last report: latencies and failures."""

    times: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def take(self) -> tuple[list[float], list[str]]:
        taken = (self.times, self.failures)
        self.times, self.failures = [], []
        return taken


async def paced(rate: float, stop: asyncio.Event, step: Any) -> None:
    """Call `step(n)` `rate` times a second until stopped (late steps are not made up)."""
    began, n = time.monotonic(), 0
    while not stop.is_set():
        await step(n)
        n += 1
        wait = began + n / rate - time.monotonic()
        if wait < 0:
            began, n = time.monotonic(), 0
        try:
            await asyncio.wait_for(stop.wait(), max(wait, 0))
        except TimeoutError:
            pass


async def timed(ops: Operations, what: str, call: Any) -> None:
    began = time.perf_counter()
    try:
        await call
    except Exception as error:  # noqa: BLE001 - every failure is counted and shown
        ops.failures.append(f"{what}: {type(error).__name__}: {error}"[:300])
    else:
        ops.times.append(time.perf_counter() - began)


async def file_transfers(
    base: str,
    token: str,
    files: str,
    size: int,
    rate: float,
    stop: asyncio.Event,
    ops: dict[str, Operations],
) -> None:
    """Upload (PUT for a presigned URL, then the bytes) and download (GET for the URL, then
    the bytes, checked) one file of `size` bytes, `rate` times a second; 16 names in turn,
    so the disk holds a bounded amount."""
    auth = {"Authorization": f"Bearer {token}"}
    data = os.urandom(size)
    digest = hashlib.md5(data).hexdigest()

    async def upload(session: aiohttp.ClientSession, path: str) -> None:
        async with session.put(path, json={}, headers=auth) as response:
            url = (await _ok(response))["url"]
        async with session.put(url, data=data) as response:
            if response.status != 200:
                raise RuntimeError(f"upload: {response.status}")

    async def download(session: aiohttp.ClientSession, path: str) -> None:
        async with session.get(path + "?url_only=true", headers=auth) as response:
            url = (await _ok(response))["url"]
        async with session.get(url) as response:
            if response.status != 200 or hashlib.md5(await response.read()).hexdigest() != digest:
                raise RuntimeError(f"download: {response.status}, or other bytes")

    async with aiohttp.ClientSession(base) as session:

        async def step(n: int) -> None:
            path = f"{files}/soak/{n % 16}.bin"
            await timed(ops["upload"], "upload", upload(session, path))
            await timed(ops["download"], "download", download(session, path))

        await paced(rate, stop, step)


async def _ok(response: aiohttp.ClientResponse) -> Any:
    if response.status != 200:
        raise RuntimeError(f"{response.method} {response.url.path}: {response.status}")
    return await response.json()


async def tunnel_streams(
    sink: int, echo: int, size: int, rate: float, stop: asyncio.Event, ops: dict[str, Operations]
) -> None:
    """Through the tunnel, `rate` times a second: a stream of `size` bytes to the sink (its
    count checked), and a connection to the echo with 10 round trips of 64 bytes."""

    async def trips() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", echo)
        message = os.urandom(tunnels.SMALL)
        for _ in range(10):
            writer.write(message)
            await writer.drain()
            if await reader.readexactly(len(message)) != message:
                raise RuntimeError("the echo answered other bytes")
        writer.close()

    async def step(n: int) -> None:
        await timed(ops["stream"], "stream", asyncio.wait_for(tunnels.copy(sink, size), 30))
        await timed(ops["round trips"], "round trips", asyncio.wait_for(trips(), 30))

    await paced(rate, stop, step)
