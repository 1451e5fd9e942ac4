"""Rollouts to a fleet (bench/jobs.py): `edge serve` in its own process, DEVICES devices
(each holding the tag TAG) connected as raw MQTT clients in a process of their own
(bench/job_fleet.py), each answering its execution (IN_PROGRESS, then SUCCEEDED, over
MQTT). A job names its devices by TAG or by the list of their IDs (`BY`: both are
measured, as a job's row keeps what it was asked). On the same server:

- unthrottled: a job over every device with no policy, from `POST /v2/jobs` to the last
  SUCCEEDED acknowledged (durable), beside the same devices each sending two durable twin
  updates in turn (the same two acknowledged writes, no scheduler), best of ROUNDS each;
- throttled: a job with `max_per_minute` of half the devices, so the second half waits
  for the next minute's window, beside the fastest the policy allows (every device in
  60 s);
- the HTTP token GET (`GET /v2/jobs/{id}` of a finished job named by tag, an org admin's
  token, wrk) during a rollout paced by `max_in_progress` (a tenth of the devices, so a
  thousand devices take about ten ticks: longer than wrk runs), and during rollouts with
  no policy one after another (a new job whenever fewer than two are left: the server's
  write path kept saturated), each beside the same GET with no device connected and no
  job running (the broker idle), in turns, the best of each.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bench import job_fleet, servers, wrk
from bench import rows as out
from bench.files import cpu_seconds
from bench.twin_fleet import Member
from bench.twins import api_call

WAIT_SECONDS = 600.0
TAG = "pump"  # every device holds it
BY = ("tag", "device IDs")  # how a job names its devices


@dataclass(frozen=True)
class Site:
    """The server, an org admin's token and the devices (each holding TAG)."""

    server: servers.Server
    port: int  # MQTT
    admin: str
    members: list[Member]

    def job(self, by: str, **policy: int) -> str:
        """A rollout job over every device, named `by` tag or by their IDs."""
        named = {"device_ids": [m.id for m in self.members]} if by == BY[1] else {"tags": [TAG]}
        body: dict[str, Any] = {
            "document": {"operation": "firmware", "version": "2.0"},
            "targets": named,
        }
        if policy:
            body["policy"] = policy
        made = api_call(self.server.url, "POST", "/v2/jobs", self.admin, body)
        return str(made["job"]["id"])


@dataclass(frozen=True)
class Timed:
    """What a load did over a run: executions, devices' twin pairs or megabytes."""

    count: float
    seconds: float
    server_cpu: float  # shares of one core over the run
    generator_cpu: float  # the fleet's, or the curls'

    @property
    def rate(self) -> float:
        return self.count / self.seconds

    def load(self) -> str:
        return out.cpu(self.server_cpu, self.generator_cpu)


@dataclass(frozen=True)
class Loaded:
    """The GET under rollouts: wrk's result, the executions finished a second meanwhile
    and the fleet's share of a core."""

    result: wrk.Result
    executions_per_s: float
    fleet_cpu: float


class Fleet:
    """The fleet's process, connected and subscribed, and its counters."""

    def __init__(self, port: int, members: Sequence[Member]) -> None:
        context = multiprocessing.get_context("spawn")
        self.counters = job_fleet.Counters(
            context.Value("q", 0), context.Value("q", 0), context.Value("q", 0)
        )
        self.go, self.ready, self.stop = context.Value("i", 0), context.Event(), context.Event()
        args = (port, list(members), self.counters, self.ready, self.go, self.stop)
        self.process = context.Process(target=job_fleet.run, args=args)

    def cpu(self) -> float:
        assert self.process.pid is not None
        return cpu_seconds(self.process.pid)

    def wait(self, value: Any, target: int) -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while value.value < target:
            if self.counters.rejected.value:
                raise RuntimeError("the server rejected a device's job update")
            if time.monotonic() > deadline or not self.process.is_alive():
                raise RuntimeError(f"the fleet finished {value.value} of {target}")
            time.sleep(0.002)


@contextmanager
def connected(port: int, members: Sequence[Member]) -> Iterator[Fleet]:
    fleet = Fleet(port, members)
    fleet.process.start()
    try:
        deadline = time.monotonic() + 300
        while not fleet.ready.wait(0.5):
            if time.monotonic() > deadline or not fleet.process.is_alive():
                raise RuntimeError("the fleet did not connect")
        yield fleet
    finally:
        fleet.stop.set()
        fleet.process.join(60)


def timed(server_pid: int, fleet: Fleet, value: Any, count: int, start: Callable[[], Any]) -> Timed:
    """From `start()` to `count` more in `value`."""
    target = value.value + count
    server, generator, began = cpu_seconds(server_pid), fleet.cpu(), time.perf_counter()
    start()
    fleet.wait(value, target)
    seconds = time.perf_counter() - began
    server_cpu = (cpu_seconds(server_pid) - server) / seconds
    return Timed(count, seconds, server_cpu, (fleet.cpu() - generator) / seconds)


def rollout(site: Site, fleet: Fleet, by: str, **policy: int) -> Timed:
    def start() -> None:
        site.job(by, **policy)

    return timed(site.server.pid, fleet, fleet.counters.jobs_done, len(site.members), start)


def twin_round(site: Site, fleet: Fleet) -> Timed:
    def start() -> None:
        with fleet.go.get_lock():
            fleet.go.value += 1

    return timed(site.server.pid, fleet, fleet.counters.twins_done, len(site.members), start)


def unthrottled(site: Site, fleet: Fleet, rounds: int) -> tuple[dict[str, Timed], Timed]:
    """(the rollout by each way of naming the devices, the twin round), each the best of
    `rounds` taken in turns."""
    jobs: dict[str, list[Timed]] = {by: [] for by in BY}
    twins = []
    for _ in range(rounds):
        twins.append(twin_round(site, fleet))
        for by, found in jobs.items():
            found.append(rollout(site, fleet, by))
    best = {by: max(found, key=lambda t: t.rate) for by, found in jobs.items()}
    return best, max(twins, key=lambda t: t.rate)


def throttled(site: Site, fleet: Fleet) -> Timed:
    return rollout(site, fleet, BY[0], max_per_minute=max(1, len(site.members) // 2))


@dataclass(frozen=True)
class Feed:
    """How rollouts follow one another: a new job (named `by`, with `policy`) whenever
    fewer than `ahead` are left to finish."""

    ahead: int
    by: str
    policy: dict[str, int]


def under_rollouts(site: Site, target: wrk.Target, load: wrk.Load, feed: Feed) -> Loaded:
    """The GET while rollouts run over the connected fleet, from its first execution
    finished; every job made is finished before the fleet leaves, so the next idle run
    is idle."""
    devices = len(site.members)
    with connected(site.port, site.members) as fleet:
        done = fleet.counters.jobs_done
        stop, made = threading.Event(), [0]
        feeder = threading.Thread(target=_feed, args=(site, fleet, feed, stop, made))
        feeder.start()
        try:
            fleet.wait(done, 1)
            before, generator, began = done.value, fleet.cpu(), time.monotonic()
            result = wrk.run(target, load, site.server.pid, settle=False)
            seconds = time.monotonic() - began
            finished, fleet_cpu = done.value - before, fleet.cpu() - generator
        finally:
            stop.set()
            feeder.join()
        fleet.wait(done, made[0] * devices)
    return Loaded(result, finished / seconds, fleet_cpu / seconds)


def _feed(site: Site, fleet: Fleet, feed: Feed, stop: threading.Event, made: list[int]) -> None:
    devices = len(site.members)
    while not stop.is_set():
        if made[0] * devices - fleet.counters.jobs_done.value < feed.ahead * devices:
            site.job(feed.by, **feed.policy)
            made[0] += 1
        else:
            time.sleep(0.02)
