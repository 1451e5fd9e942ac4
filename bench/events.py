"""Live changes: SSE subscribers (GET /v2/events) while data is written, at a small and a
large number of subscribers (10 and 500 by default), each on a server of its own.

`edge serve` runs in its own process with its default settings, but for the connections
one address may hold (all the clients here are on loopback, one address). One group; `subscribers`
devices each hold group access to it, half with `data_paths` {/: read} (full readers),
half with {/public: read} (narrowed readers), and each opens one stream of the group's data
changes with its API key. Writers PUT entries, alternately under /public and /private,
over kept-alive connections. Every subscriber must receive every change it may read (none
lost) and none it may not (none leaked: a narrowed reader that hears a /private path).

- steady: `rate` writes/s for `seconds`, with the server's RSS sampled every 5 seconds
  (after the rate steps below, so the window of recent events, 10,000 by default, is
  already full: what grows after that is a leak); delivery is measured from the PUT's
  start to the event's arrival at each subscriber, beside the PUT's own latency;
- rate steps: writes paced at 200, 400, 800, ... per second for `step` seconds each, then
  unpaced, until a step loses an event or the writers cannot reach the rate (the server is
  saturated); the highest rate reached with 0 lost, beside the PUT rate with no
  subscribers (unpaced, the same writers, on the same server before any stream opens).

Each size's figures stand beside their references of the same run (the PUT's own p99, the
PUT rate with no subscribers, the RSS at the steady run's start), and the large size's
delivery p99 and highest rate beside the small size's: what the subscribers' number costs.
There is no MQTT side here: the MQTT data-change topics (docs/mqtt.md) are delivered by
the broker's subscription tree, measured by bench/mqtt.py's fan-out rows.

The subscribers and the writers share this one process (asyncio, aiohttp): the load column
shows its CPU beside the server's, so a step where this process was the limit shows.

Run: .venv/bin/python -m bench.events [--subscribers 10,500] [--rate 200] [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from bench import rows as out
from bench import servers
from bench.files import cpu_seconds
from bench.twins import api_call, p, sign_in

WRITERS = 32  # PUTs in flight at most
DRAIN_SECONDS = 5.0  # after the last write, how long stragglers may take to arrive
RSS_EVERY = 5.0
FIRST_RATE = 200
SIZES = (10, 500)  # subscribers: the small size and the large


@dataclass
class Subscriber:
    key: str
    full: bool  # reads the whole group (else /public only)
    arrived: dict[str, float] = field(default_factory=dict)  # path -> arrival time
    leaked: int = 0
    ended: bool = False


@dataclass
class Phase:
    """One run of writes: what was sent when, and what it cost."""

    rate: float  # writes per second reached
    sent: dict[str, float]  # path -> the PUT's start
    put_seconds: list[float]
    lost: int = 0
    leaked: int = 0
    delivery: list[float] = field(default_factory=list)
    server_cpu: float = 0.0
    generator_cpu: float = 0.0


@dataclass(frozen=True)
class Figures:
    subscribers: int
    baseline: Phase
    steps: list[Phase]
    steady: Phase
    rss_kib: list[int]


# -- the site ----------------------------------------------------------------------------
def site(base: str, subscribers: int) -> tuple[str, str, list[Subscriber]]:
    """The admin's token, the group and the subscribing devices with their access."""
    staff = sign_in(base, password=servers.PASSWORD)
    api_call(base, "POST", "/v2/orgs", staff, {"name": "Live", "alias": "live"})
    admin = sign_in(base, password=servers.PASSWORD, scope="live")
    group = str(api_call(base, "POST", "/v2/groups", admin, {"name": "live"})["group"]["id"])
    found = []
    for n in range(subscribers):
        device = api_call(base, "POST", "/v2/devices", admin, {"name": f"sub-{n}"})["device"]
        full = n % 2 == 0
        paths = {"/": {"can_read": True}} if full else {"/public": {"can_read": True}}
        access = f"/v2/groups/{group}/access/{device['id']}"
        api_call(base, "POST", access, admin, {"data_paths": paths})
        found.append(Subscriber(device["api_key"], full))
    return admin, group, found


# -- subscribers ---------------------------------------------------------------------------
async def listen(
    session: aiohttp.ClientSession, url: str, sub: Subscriber, ready: asyncio.Event
) -> None:
    headers = {"Authorization": f"Bearer {sub.key}", "Accept": "text/event-stream"}
    async with session.get(url, headers=headers) as response:
        if response.status != 200:
            raise RuntimeError(f"stream refused: {response.status} {await response.text()}")
        ready.set()
        async for line in response.content:
            if not line.startswith(b"data: "):
                continue
            path = _path(line)
            if not sub.full and not path.startswith("/public/"):
                sub.leaked += 1
            sub.arrived[path] = time.perf_counter()
    sub.ended = True


def _path(line: bytes) -> str:
    """The `path` of a data event's JSON, found without parsing the rest."""
    start = line.index(b'"path":"') + 8
    return line[start : line.index(b'"', start)].decode()


# -- writers -------------------------------------------------------------------------------
async def write(
    session: aiohttp.ClientSession,
    url: str,
    admin: str,
    tag: str,
    rate: float | None,
    seconds: float,
) -> Phase:
    """PUT entries at `rate` per second (None: as fast as WRITERS in flight allow)."""
    headers = {"Authorization": f"Bearer {admin}"}
    sent: dict[str, float] = {}
    took: list[float] = []
    gate = asyncio.Semaphore(WRITERS)

    async def one(path: str) -> None:
        async with gate:
            start = time.perf_counter()
            sent[path] = start
            async with session.put(f"{url}{path}", json={"value": 1}, headers=headers) as r:
                await r.read()
                if r.status != 200:
                    raise RuntimeError(f"PUT {path}: {r.status}")
            took.append(time.perf_counter() - start)

    tasks = []
    began = time.perf_counter()
    n = 0
    while (now := time.perf_counter()) - began < seconds:
        if rate is not None:
            due = began + n / rate
            if due > now:
                await asyncio.sleep(due - now)
        elif len(tasks) - len(took) >= WRITERS:
            await asyncio.sleep(0)
            continue
        side = "public" if n % 2 == 0 else "private"
        tasks.append(asyncio.create_task(one(f"/{side}/{tag}-{n}")))
        n += 1
    await asyncio.gather(*tasks)
    return Phase(len(took) / (time.perf_counter() - began), sent, took)


async def settle(phase: Phase, subs: list[Subscriber]) -> None:
    """Wait until every subscriber has what it may read of the phase, or DRAIN_SECONDS
    without progress; then count what was lost and leaked, and the delivery times."""
    last, quiet_since = -1, time.perf_counter()
    while time.perf_counter() - quiet_since < DRAIN_SECONDS:
        have = sum(len(s.arrived) for s in subs)
        if have != last:
            last, quiet_since = have, time.perf_counter()
        if all(_missing(phase, s) == 0 for s in subs):
            break
        await asyncio.sleep(0.05)
    phase.lost = sum(_missing(phase, s) for s in subs)
    phase.leaked = sum(s.leaked for s in subs)
    for sub in subs:
        for path, start in phase.sent.items():
            arrived = sub.arrived.get(path)
            if arrived is not None:
                phase.delivery.append(arrived - start)


def _missing(phase: Phase, sub: Subscriber) -> int:
    wanted = [p for p in phase.sent if sub.full or p.startswith("/public/")]
    return sum(1 for path in wanted if path not in sub.arrived)


# -- the run -------------------------------------------------------------------------------
def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def measured(pid: int, work: asyncio.Future[Phase] | asyncio.Task[Phase]) -> Phase:
    cpu, mine, began = cpu_seconds(pid), time.process_time(), time.monotonic()
    phase = await work
    wall = time.monotonic() - began
    phase.server_cpu = (cpu_seconds(pid) - cpu) / wall
    phase.generator_cpu = (time.process_time() - mine) / wall
    return phase


async def sample_rss(pid: int, seconds: float, into: list[int]) -> None:
    began = time.monotonic()
    while time.monotonic() - began <= seconds:
        into.append(rss_kib(pid))
        await asyncio.sleep(RSS_EVERY)


async def measure(
    server: servers.Server, subscribers: int, rate: float, seconds: float, step: float
) -> Figures:
    admin, group, subs = site(server.url, subscribers)
    data_url = f"{server.url}/v2/groups/{group}/data"
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(None)
    ) as session:
        baseline = await measured(
            server.pid, asyncio.ensure_future(write(session, data_url, admin, "base", None, step))
        )
        url = f"{server.url}/v2/events?kinds=data&group_id={group}"
        readies = [asyncio.Event() for _ in subs]
        listeners = [
            asyncio.create_task(listen(session, url, s, r))
            for s, r in zip(subs, readies, strict=True)
        ]
        await asyncio.gather(*(r.wait() for r in readies))
        steps = await _steps(server.pid, session, data_url, admin, subs, step)
        rss: list[int] = []
        sampler = asyncio.create_task(sample_rss(server.pid, seconds, rss))
        steady = await measured(
            server.pid,
            asyncio.ensure_future(write(session, data_url, admin, "steady", rate, seconds)),
        )
        await sampler
        await settle(steady, subs)
        for task in listeners:
            task.cancel()
    return Figures(subscribers, baseline, steps, steady, rss)


async def _steps(
    pid: int,
    session: aiohttp.ClientSession,
    url: str,
    admin: str,
    subs: list[Subscriber],
    step: float,
) -> list[Phase]:
    """Paced rates doubling from FIRST_RATE, then unpaced, until one loses or falls short."""
    found: list[Phase] = []
    target: float | None = FIRST_RATE
    while True:
        phase = await measured(
            pid, asyncio.ensure_future(write(session, url, admin, f"s{len(found)}", target, step))
        )
        await settle(phase, subs)
        found.append(phase)
        _print_phase(f"step {'unpaced' if target is None else f'{target:g}/s'}", phase)
        if target is None or phase.lost or phase.rate < 0.95 * target:
            return found
        target = target * 2 if target * 2 <= 3200 else None


def highest_without_loss(steps: list[Phase]) -> float:
    return max((s.rate for s in steps if s.lost == 0), default=0.0)


def run(subscribers: int, rate: float, seconds: float, step: float) -> Figures:
    # Every subscriber and writer comes from 127.0.0.1 here, where a LAN's come from
    # addresses of their own: one address may hold them all (and the site's setup calls).
    room = {"EDGE_MAX_CONNECTIONS_PER_ADDRESS": str(max(512, subscribers + WRITERS + 64))}
    with tempfile.TemporaryDirectory(prefix="edge-bench-events-") as folder:
        with servers.edge(Path(folder), room) as server:
            figures = asyncio.run(measure(server, subscribers, rate, seconds, step))
    _print(figures)
    return figures


def _print_phase(label: str, f: Phase) -> None:
    ms = 1000.0
    delivery = ""
    if f.delivery:
        median, p99 = statistics.median(f.delivery) * ms, p(f.delivery, 0.99) * ms
        delivery = f" delivery p50 {median:.1f} ms, p99 {p99:.1f} ms;"
    print(
        f"{label}: {f.rate:.0f} writes/s, {f.lost} lost, {f.leaked} leaked;{delivery}"
        f" PUT p99 {p(f.put_seconds, 0.99) * ms:.1f} ms; {out.cpu(f.server_cpu, f.generator_cpu)}",
        flush=True,
    )


def _print(f: Figures) -> None:
    _print_phase("no subscribers, unpaced", f.baseline)
    _print_phase(f"{f.subscribers} subscribers, steady", f.steady)
    first, last, most = (kib / 1024 for kib in (f.rss_kib[0], f.rss_kib[-1], max(f.rss_kib)))
    print(f"server RSS over the steady run: {first:.1f} MiB -> {last:.1f} MiB (max {most:.1f})")
    best = highest_without_loss(f.steps)
    print(f"highest rate with 0 lost: {best:.0f}/s; {f.baseline.rate:.0f}/s with no subscribers")


def as_rows(f: Figures, line: str) -> list[out.Row]:
    steady, load = f.steady, out.cpu(f.steady.server_cpu, f.steady.generator_cpu)
    label = f"{f.subscribers} SSE subscribers, {steady.rate:.0f} writes/s"
    first, last = f.rss_kib[0] / 1024, f.rss_kib[-1] / 1024
    best = highest_without_loss(f.steps)
    best_load = next((s for s in f.steps if s.rate == best), f.steady)
    return [
        out.Row(
            f"{label}: events lost + leaked",
            steady.lost + steady.leaked,
            "events",
            passed=steady.lost == 0 and steady.leaked == 0,
            load=load,
            command=line,
        ),
        out.Row(
            f"{label}: delivery p99 (PUT start to event)",
            p(steady.delivery, 0.99) * 1000 if steady.delivery else 0.0,
            "ms",
            "the PUT's own p99, same run",
            p(steady.put_seconds, 0.99) * 1000,
            lower_is_better=True,
            load=load,
            command=line,
        ),
        out.Row(
            f"{label}: server RSS, last of the steady run's samples (every {RSS_EVERY:g} s)",
            last,
            "MiB",
            "at its start (window already full)",
            first,
            lower_is_better=True,
            load=load,
            command=line,
            passed=last <= first * 1.05,
        ),
        out.Row(
            f"highest write rate with {f.subscribers} subscribers and 0 lost",
            best,
            "writes/s",
            "unpaced PUT rate with no subscribers",
            f.baseline.rate,
            load=out.cpu(best_load.server_cpu, best_load.generator_cpu),
            command=line,
        ),
    ]


def against_small(small: Figures, large: Figures, line: str) -> list[out.Row]:
    """The large size beside the small one: what more subscribers cost."""
    n, m = large.subscribers, small.subscribers
    load = out.cpu(large.steady.server_cpu, large.steady.generator_cpu)
    return [
        out.Row(
            f"delivery p99 with {n} SSE subscribers, {large.steady.rate:.0f} writes/s",
            _p99_ms(large.steady),
            "ms",
            f"the same with {m} subscribers",
            _p99_ms(small.steady),
            lower_is_better=True,
            load=load,
            command=line,
        ),
        out.Row(
            f"highest write rate with 0 lost, {n} SSE subscribers",
            highest_without_loss(large.steps),
            "writes/s",
            f"the same with {m} subscribers",
            highest_without_loss(small.steps),
            command=line,
        ),
    ]


def _p99_ms(phase: Phase) -> float:
    return p(phase.delivery, 0.99) * 1000 if phase.delivery else 0.0


def sized(sizes: list[int], rate: float, seconds: float, step: float, line: str) -> list[out.Row]:
    """Each size's rows, then the largest beside the smallest."""
    found = [run(n, rate, seconds, step) for n in sizes]
    rows = [row for figures in found for row in as_rows(figures, line)]
    if len(found) > 1:
        rows += against_small(found[0], found[-1], line)
    return rows


def rows(quick: bool) -> list[out.Row]:
    seconds, step = (20, 5) if quick else (60, 10)
    sizes = ",".join(str(n) for n in SIZES)
    line = out.command("bench.events", "--subscribers", sizes, "--seconds", seconds, "--step", step)
    return sized(list(SIZES), FIRST_RATE, seconds, step, line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--subscribers",
        default=",".join(str(n) for n in SIZES),
        help="comma-separated numbers of subscribers, each run on a server of its own",
    )
    parser.add_argument("--rate", type=float, default=200, help="writes/s of the steady run")
    parser.add_argument("--seconds", type=float, default=60, help="length of the steady run")
    parser.add_argument("--step", type=float, default=10, help="seconds of each rate step")
    args = parser.parse_args()
    sizes = sorted(int(n) for n in args.subscribers.split(","))
    found = sized(sizes, args.rate, args.seconds, args.step, "")
    for row in found[-2:] if len(sizes) > 1 else []:  # the large size beside the small
        print(f"{row.name}: {row.edge:.1f} {row.unit}; {row.reference}: {row.reference_value}")


if __name__ == "__main__":
    main()
