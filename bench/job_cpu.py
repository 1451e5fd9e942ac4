"""The server's CPU time per job execution (#31): a figure that does not depend on how
loaded the machine is, unlike a rate.

`edge serve` runs on a fresh data folder with DEVICES devices (each holding the tag
bench.job_rollout.TAG) connected as raw MQTT clients in a process of their own
(bench/job_fleet.py), each answering its execution (IN_PROGRESS, then SUCCEEDED). ROUNDS
rollouts over every device are run one after another (paced by `max_in_progress`, a
tenth of the devices, as the GET's figure is, or with no policy), and the server
process's user + system CPU time (/proc/<pid>/stat) is read before the first job is
made and after the last SUCCEEDED is acknowledged: CPU ms per execution, and the main
thread's read and write system calls per execution (/proc/<pid>/task/<pid>/io; the load
does not move them). A first round is left out (warm-up: imports on first use, caches).

`--in-process` measures the jobs room alone, as bench/job_ticks.py does the scheduler's
tick: in this process on a real data folder (no broker, no HTTP: notify-next is not
published), `time.process_time()` (every thread, the database writer's among them)
around a tick that releases a job over DEVICES devices and each device's two updates
(IN_PROGRESS, SUCCEEDED) through the service its MQTT and HTTP updates use, one write
each (no group commit): a figure the machine's load hardly moves, for before/after.

`--py-spy FILE` also records the server with py-spy (`.venv/bin/pip install -e .[profile]`)
over the measured rounds, as a raw (collapsed stacks) profile.

Run: .venv/bin/python -m bench.job_cpu [--devices 200] [--rounds 5] [--by tag]
     [--policy paced|none] [--py-spy /tmp/profile.txt]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench import job_rollout, job_ticks, servers
from bench.job_ticks import seed_devices
from bench.twin_fleet import _site
from edge.app import open_site
from edge.kernel.config import load
from edge.kernel.principal import Principal
from storage import staff


def policy(name: str, devices: int) -> dict[str, int]:
    return {"max_in_progress": max(1, devices // 10)} if name == "paced" else {}


@contextmanager
def profiled(pid: int, output: str | None) -> Iterator[None]:
    """py-spy recording `pid` while the block runs, when `output` is given."""
    if output is None:
        yield
        return
    spy = shutil.which("py-spy") or str(Path(servers.edge_command()[0]).parent / "py-spy")
    command = [spy, "record", "-p", str(pid), "-r", "200", "-f", "raw", "-o", output]
    process = subprocess.Popen([*command, "--threads", "--nonblocking"])
    try:
        yield
    finally:
        process.send_signal(2)
        process.wait(timeout=60)


def cpu_seconds(pid: int) -> float:
    return cpu_seconds_of(Path(f"/proc/{pid}/stat"))


def loop_cpu_seconds(pid: int) -> float:
    """CPU seconds of the process's main thread (its event loop: HTTP, the broker, the
    services), /proc/<pid>/task/<pid>/stat; the rest is the other threads' (the database
    writer's, the log writer's)."""
    return cpu_seconds_of(Path(f"/proc/{pid}/task/{pid}/stat"))


def cpu_seconds_of(stat: Path) -> float:
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loop_syscalls(pid: int) -> tuple[int, int]:
    """Read and write system calls of the process's main thread so far (socket reads and
    writes: /proc/<pid>/task/<pid>/io), a count the machine's load does not move."""
    fields = dict(
        line.split(": ") for line in Path(f"/proc/{pid}/task/{pid}/io").read_text().splitlines()
    )
    return int(fields["syscr"]), int(fields["syscw"])


def measure(devices: int, rounds: int, by: str, pace: str, spy: str | None) -> tuple[float, float]:
    """CPU ms of the server per execution over `rounds` rollouts after a warm-up one: the
    whole process's and its main thread's (its system calls per execution printed)."""
    with tempfile.TemporaryDirectory(prefix="edge-bench-jobcpu-") as folder:
        env = servers.mqtt_ports()
        with servers.edge(Path(folder), env) as server:
            admin, members = _site(server.url, devices, tags=[job_rollout.TAG])
            site = job_rollout.Site(server, int(env["EDGE_MQTT_PORT"]), admin, members)
            with job_rollout.connected(site.port, members) as fleet:
                job_rollout.rollout(site, fleet, by, **policy(pace, devices))
                with profiled(server.pid, spy):
                    before, loop = cpu_seconds(server.pid), loop_cpu_seconds(server.pid)
                    reads, writes = loop_syscalls(server.pid)
                    for _ in range(rounds):
                        timed = job_rollout.rollout(site, fleet, by, **policy(pace, devices))
                        print(f"  {timed.rate:,.0f} executions/s ({timed.load()})", flush=True)
                    used = cpu_seconds(server.pid) - before
                    loop = loop_cpu_seconds(server.pid) - loop
                    now_reads, now_writes = loop_syscalls(server.pid)
    executions = rounds * devices
    print(
        f"  main thread per execution: {(now_reads - reads) / executions:.2f} reads,"
        f" {(now_writes - writes) / executions:.2f} writes (system calls)",
        flush=True,
    )
    return used * 1000 / executions, loop * 1000 / executions


async def in_process(folder: Path, devices: int, rounds: int) -> float:
    """CPU ms per execution of the jobs room alone (see the module's docstring)."""
    site = open_site(load({"data_dir": str(folder), "log_level": "warning"}, {}))
    services = site.services
    staff_id = services.db.read(staff.first)["id"]
    boss = Principal("staff", staff_id, None)
    org_id = await services.orgs.create(boss, {"name": "Bench", "alias": "bench"})
    bench = job_ticks.Bench(
        site, Principal("staff", staff_id, None, org_id), seed_devices(services.db, org_id, devices)
    )
    spent = 0.0
    try:
        for round_ in range(rounds + 1):  # the first is a warm-up
            job_id = await bench.job("tag", devices)
            began = time.process_time()
            released = (await services.job_scheduler.tick()).devices
            for device_id in released:
                for state in ("IN_PROGRESS", "SUCCEEDED"):
                    await services.device_jobs.update(device_id, job_id, {"state": state})
            spent += (time.process_time() - began) if round_ else 0.0
    finally:
        services.db.close()
    return spent * 1000 / (rounds * devices)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--by", choices=job_rollout.BY, default=job_rollout.BY[0])
    parser.add_argument("--policy", choices=("paced", "none"), default="paced")
    parser.add_argument("--py-spy", dest="spy", default=None)
    parser.add_argument("--in-process", action="store_true")
    args = parser.parse_args()
    if args.in_process:
        with tempfile.TemporaryDirectory(prefix="edge-bench-jobcpu-") as folder:
            ms = asyncio.run(in_process(Path(folder), args.devices, args.rounds))
        print(f"jobs room CPU per execution, in process: {ms:.3f} ms", flush=True)
        return
    ms, loop = measure(args.devices, args.rounds, args.by, args.policy, args.spy)
    print(
        f"server CPU per execution: {ms:.3f} ms, its main thread {loop:.3f} ms"
        f" ({args.devices} devices by {args.by},"
        f" {args.rounds} rounds, policy {args.policy})",
        flush=True,
    )


if __name__ == "__main__":
    main()
