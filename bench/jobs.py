"""Rollout jobs' figures (#31), each beside its reference in the same run:

- a rollout to DEVICES devices (and to SMALL), raw MQTT clients in a process of their own
  each answering its execution (IN_PROGRESS, then SUCCEEDED): executions finished a
  second with no policy (the job naming its devices by tag, and by their IDs), beside the
  same devices each sending two durable twin updates in turn; and throttled by
  `max_per_minute`, beside the fastest that policy allows (bench/job_rollout.py,
  bench/job_fleet.py);
- the HTTP token GET (wrk) while rollouts run over the DEVICES, beside the same GET with
  the broker idle: target at least 0.7x during a paced rollout; rollouts back to back,
  with no policy, are shown without a target (bench/job_rollout.py);
- the scheduler's CPU per tick for a job over TICK_LARGE devices beside one over
  TICK_SMALL, targets named by a tag and by device IDs: target at least 0.8x, a tick
  costing at most 1.25x (bench/job_ticks.py);
- DOWNLOADERS devices fetching a SIZE MiB artifact at once through their presigned URLs
  (and a SMALL_SIZE one), beside as many curl downloads of the same file from nginx:
  target at least 0.8x (bench/job_downloads.py).

Run: .venv/bin/python -m bench.jobs [--devices 1000] [--small 50] [--ticks 500]
     [--size-mib 64] [--downloaders 20] [--only rollout,get,ticks,downloads]
(it prints its rows as docs/performance.md's table has them).
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench import job_downloads, job_rollout, job_ticks, report, servers, wrk
from bench import rows as out
from bench.job_rollout import Loaded, Timed
from bench.twin_fleet import _site
from bench.twins import api_call

PARTS = ("rollout", "get", "ticks", "downloads")
GET_FLOOR = 0.7
TICK_FLOOR = 0.8
DOWNLOAD_FLOOR = 0.8


@dataclass(frozen=True)
class Sizes:
    devices: int = 1000
    small: int = 50
    tick_sizes: tuple[int, int] = (10, 10_000)
    ticks: int = 500
    size_mib: int = 64
    small_mib: int = 1
    downloaders: int = 20
    rounds: int = 3
    seconds: float = 5.0

    def command(self) -> str:
        return out.command(
            "bench.jobs",
            *("--devices", self.devices, "--small", self.small),
            *("--tick-sizes", f"{self.tick_sizes[0]},{self.tick_sizes[1]}"),
            *("--ticks", self.ticks, "--size-mib", self.size_mib),
            *("--small-mib", self.small_mib, "--downloaders", self.downloaders),
            *("--rounds", self.rounds, "--seconds", self.seconds),
        )


QUICK = Sizes(200, 50, (10, 1000), 200, 8, 1, 20, 1, 3.0)


@dataclass(frozen=True)
class Rollouts:
    devices: int
    unthrottled: dict[str, Timed]  # by how the job names its devices
    twins: Timed
    throttled: Timed
    # The GET idle, and during each kind of rollout (`feeds`): at the large size only.
    get: tuple[wrk.Result, dict[str, Loaded]] | None


def feeds(devices: int) -> dict[str, job_rollout.Feed]:
    """The rollouts the GET runs beside: paced by `max_in_progress` (a tenth of the
    devices) and with no policy back to back, the job naming its devices by tag and by
    their IDs."""
    paced = {"max_in_progress": max(1, devices // 10)}
    return {
        f"{how}, by {by}": job_rollout.Feed(ahead, by, policy)
        for how, ahead, policy in (
            (f"a rollout (max_in_progress {paced['max_in_progress']})", 1, paced),
            ("rollouts back to back, no policy", 2, {}),
        )
        for by in job_rollout.BY
    }


def rollouts(devices: int, rounds: int, get: wrk.Load | None) -> Rollouts:
    with tempfile.TemporaryDirectory(prefix="edge-bench-jobs-") as folder:
        env = servers.mqtt_ports()
        with servers.edge(Path(folder), env) as server:
            admin, members = _site(server.url, devices, tags=[job_rollout.TAG])
            site = job_rollout.Site(server, int(env["EDGE_MQTT_PORT"]), admin, members)
            with job_rollout.connected(site.port, members) as fleet:
                jobs, twins = job_rollout.unthrottled(site, fleet, rounds)
                throttled = job_rollout.throttled(site, fleet)
            measured = None if get is None else _gets(site, get, rounds)
    found = Rollouts(devices, jobs, twins, throttled, measured)
    _print(found)
    return found


def _gets(
    site: job_rollout.Site, load: wrk.Load, rounds: int
) -> tuple[wrk.Result, dict[str, Loaded]]:
    """The GET of a finished job named by tag: idle, then beside each kind of rollout, in
    turns, the best of each."""
    listed = api_call(site.server.url, "GET", "/v2/jobs?limit=100", site.admin)["jobs"]
    job_id = next(j["id"] for j in listed if "tags" in j["targets"])
    target = wrk.Target(f"{site.server.url}/v2/jobs/{job_id}", token=site.admin)
    idle: list[wrk.Result] = []
    loaded: dict[str, list[Loaded]] = {name: [] for name in feeds(len(site.members))}
    for _ in range(rounds):
        idle.append(wrk.run(target, load, site.server.pid))
        for name, feed in feeds(len(site.members)).items():
            loaded[name].append(job_rollout.under_rollouts(site, target, load, feed))
    best = {name: max(found, key=lambda r: r.result.rps) for name, found in loaded.items()}
    return max(idle, key=lambda r: r.rps), best


def _print(r: Rollouts) -> None:
    for by, timed in r.unthrottled.items():
        print(
            f"rollout to {r.devices} devices by {by}: {timed.rate:,.0f} executions/s"
            f" ({timed.seconds:.2f} s, {timed.load()})",
            flush=True,
        )
    print(
        f"two durable twin updates per device: {r.twins.rate:,.0f} devices/s"
        f" ({r.twins.load()}); throttled to {r.devices // 2} a minute:"
        f" {r.throttled.rate:.1f}/s ({r.throttled.seconds:.1f} s)",
        flush=True,
    )
    if r.get is not None:
        idle, loaded = r.get
        for how, under in loaded.items():
            print(
                f"job GET: {under.result.rps:,.0f} req/s during {how}"
                f" ({under.executions_per_s:,.0f} executions/s, srv/wrk {under.result.cpu()},"
                f" fleet {under.fleet_cpu * 100:.0f}%) beside {idle.rps:,.0f} req/s idle:"
                f" {under.result.rps / idle.rps:.2f}x",
                flush=True,
            )


def rollout_rows(r: Rollouts, line: str) -> list[out.Row]:
    found = [
        out.Row(
            f"job rollout to {r.devices:,} devices by {by} (raw MQTT, IN_PROGRESS then"
            f" SUCCEEDED), no policy: executions finished ({timed.seconds:.2f} s)",
            timed.rate,
            "/s",
            "the same devices, two durable twin updates each in turn (devices/s)",
            r.twins.rate,
            load=f"{timed.load()}; twins {r.twins.load()}",
            command=line,
        )
        for by, timed in r.unthrottled.items()
    ]
    found.append(
        out.Row(
            f"job rollout to {r.devices:,} devices by tag, max_per_minute"
            f" {max(1, r.devices // 2)}: executions finished ({r.throttled.seconds:.1f} s)",
            r.throttled.rate,
            "/s",
            "the fastest that policy allows (every device in 60 s)",
            r.devices / 60,
            load=r.throttled.load(),
            command=line,
        )
    )
    if r.get is not None:
        idle, loaded = r.get
        for how, under in loaded.items():
            paced = "max_in_progress" in how
            found.append(_get_row(r, idle, under, how, GET_FLOOR if paced else None, line))
    return found


def _get_row(
    r: Rollouts, idle: wrk.Result, under: Loaded, how: str, floor: float | None, line: str
) -> out.Row:
    return out.Row(
        f"job GET (token) during {how} to {r.devices:,} devices"
        f" ({under.executions_per_s:,.0f} executions/s), p99 {under.result.p99_ms:.1f} ms",
        under.result.rps,
        "req/s",
        f"the same GET, broker idle, p99 {idle.p99_ms:.1f} ms",
        idle.rps,
        floor=floor,
        load=f"srv {under.result.server_cpu * 100:.0f}% / gen wrk"
        f" {under.result.wrk_cpu * 100:.0f}% + fleet {under.fleet_cpu * 100:.0f}%",
        command=line,
    )


def tick_rows(costs: job_ticks.Costs, sizes: tuple[int, int], line: str) -> list[out.Row]:
    small, large = sizes
    found = []
    for kind in job_ticks.KINDS:
        for what, name in (("releasing", "releasing one execution"), ("holding", "nothing due")):
            found.append(
                out.Row(
                    f"job scheduler CPU per tick, {name}, job over {large:,} devices by {kind}",
                    getattr(costs[large, kind], what) * 1e6,
                    "us",
                    f"the same, job over {small:,} devices",
                    getattr(costs[small, kind], what) * 1e6,
                    floor=TICK_FLOOR,
                    lower_is_better=True,
                    load="in-process, process_time",
                    command=line,
                )
            )
    return found


def download_rows(
    found: dict[int, tuple[Timed, Timed]],
    downloaders: int,
    full_mib: int,
    line: str,
) -> list[out.Row]:
    return [
        out.Row(
            f"{downloaders} devices fetching a {mib} MiB job artifact at once (presigned URLs)",
            edge.rate,
            "MB/s",
            f"{downloaders} curl of the same file from nginx at once",
            nginx.rate,
            floor=DOWNLOAD_FLOOR if mib == full_mib else None,
            load=f"{edge.load()}; nginx {nginx.load()}",
            command=line,
        )
        for mib, (edge, nginx) in found.items()
    ]


def measure(sizes: Sizes, parts: tuple[str, ...]) -> list[out.Row]:
    line = sizes.command()
    found: list[out.Row] = []
    if "rollout" in parts or "get" in parts:
        load = wrk.Load(connections=32, seconds=sizes.seconds) if "get" in parts else None
        found += rollout_rows(rollouts(sizes.small, sizes.rounds, None), line)
        found += rollout_rows(rollouts(sizes.devices, sizes.rounds, load), line)
    if "ticks" in parts:
        costs = job_ticks.run(sizes.tick_sizes, sizes.ticks, sizes.rounds)
        found += tick_rows(costs, sizes.tick_sizes, line)
    if "downloads" in parts:
        transfers = {
            mib: job_downloads.run(mib, sizes.downloaders, sizes.rounds)
            for mib in (sizes.small_mib, sizes.size_mib)
        }
        found += download_rows(transfers, sizes.downloaders, sizes.size_mib, line)
    return found


def rows(quick: bool) -> list[out.Row]:
    return measure(QUICK if quick else Sizes(), PARTS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    default = Sizes()
    parser.add_argument("--devices", type=int, default=default.devices)
    parser.add_argument("--small", type=int, default=default.small, help="the small rollout")
    parser.add_argument("--tick-sizes", default="10,10000", help="the two jobs' device counts")
    parser.add_argument("--ticks", type=int, default=default.ticks, help="timed per kind")
    parser.add_argument("--size-mib", type=int, default=default.size_mib)
    parser.add_argument("--small-mib", type=int, default=default.small_mib)
    parser.add_argument("--downloaders", type=int, default=default.downloaders)
    parser.add_argument("--rounds", type=int, default=default.rounds, help="best of, in turns")
    parser.add_argument("--seconds", type=float, default=default.seconds, help="each wrk run")
    parser.add_argument("--only", default=",".join(PARTS), help=f"of {','.join(PARTS)}")
    args = parser.parse_args()
    small, large = (int(n) for n in args.tick_sizes.split(","))
    sizes = Sizes(
        args.devices,
        args.small,
        (small, large),
        args.ticks,
        args.size_mib,
        args.small_mib,
        args.downloaders,
        args.rounds,
        args.seconds,
    )
    print("\n".join(report.table(measure(sizes, tuple(args.only.split(","))))))


if __name__ == "__main__":
    main()
