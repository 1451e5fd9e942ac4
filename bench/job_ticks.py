"""The job scheduler's CPU per tick, at a job over few and over many devices (bench/jobs.py).

The scheduler's tick (edge/jobs/scheduler.py, `Scheduler.tick`: one write transaction,
then the notices) runs in this process on a real data folder (`open_site`, as
bench/billing.py does), with no server around it: `time.process_time()` is read just
before and just after each `await tick()`, so what is summed is the CPU of this process,
all its threads (the database's writer thread among them), spent on ticks alone. Two kinds
of tick, each over a job of SMALL and of LARGE devices:

- releasing: `max_in_progress` 1, and between two ticks (not timed) the device of the
  execution just released reports SUCCEEDED through the service its MQTT and HTTP
  updates use, so every timed tick releases exactly one execution (a job over few
  devices that runs out is followed by a new one, made untimed);
- holding: `max_in_progress` 5, all five in progress, the rest waiting: a tick that finds
  nothing due, the common one while devices work.

Only the publish of notify-next is left out (no broker is wired in this process); its
cost is per released device, the same at both sizes. Lower is better; the target: the
large job's tick costs at most 1.25x the small one's (a tick rate at least 0.8x).
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from edge.accounts.device_kind import new_device
from edge.app import Site, open_site
from edge.devices import credentials
from edge.kernel.config import load
from edge.kernel.errors import Conflict
from edge.kernel.principal import Principal
from storage import devices as device_store
from storage import staff
from storage.database import Database
from storage.rows import Tx

HELD = 5
TAG = "pump"
# How a job names its devices: every seeded device holds TAG; or the list of their IDs.
KINDS = ("tag", "device IDs")


@dataclass(frozen=True)
class TickCost:
    releasing: float  # CPU seconds per tick that released one execution
    holding: float  # per tick that found nothing due


class Bench:
    def __init__(self, site: Site, owner: Principal, device_ids: list[str]) -> None:
        self.services = site.services
        self.owner = owner
        self.targets = {"tag": {"tags": [TAG]}, "device IDs": {"device_ids": device_ids}}

    async def job(self, kind: str, max_in_progress: int) -> str:
        body = {
            "document": {"operation": "firmware"},
            "targets": self.targets[kind],
            "policy": {"max_in_progress": max_in_progress},
        }
        return str((await self.services.jobs.create(self.owner, body))["id"])

    async def tick(self) -> tuple[float, set[str]]:
        """The CPU seconds of one tick, and the devices it released."""
        began = time.process_time()
        changes = await self.services.job_scheduler.tick()
        return time.process_time() - began, changes.devices

    async def finish(self, job_id: str, device_id: str) -> None:
        await self.services.device_jobs.update(device_id, job_id, {"state": "SUCCEEDED"})

    async def end(self, job_id: str) -> None:
        with contextlib.suppress(Conflict):  # unless it has just completed
            await self.services.jobs.cancel(self.owner, job_id, True)

    async def releasing(self, kind: str, ticks: int) -> float:
        spent, counted, job_id = 0.0, 0, await self.job(kind, 1)
        while counted < ticks:
            seconds, released = await self.tick()
            if not released:  # the job ran out of devices: a new one, untimed
                job_id = await self.job(kind, 1)
                continue
            assert len(released) == 1
            spent, counted = spent + seconds, counted + 1
            await self.finish(job_id, released.pop())
        await self.end(job_id)
        return spent / ticks

    async def holding(self, kind: str, ticks: int) -> float:
        job_id = await self.job(kind, HELD)
        _, released = await self.tick()
        assert len(released) == min(HELD, len(self.targets["device IDs"]["device_ids"]))
        spent = 0.0
        for _ in range(ticks):
            seconds, released = await self.tick()
            assert not released
            spent += seconds
        await self.end(job_id)
        return spent / ticks


def seed_devices(db: Database, org_id: str, count: int) -> list[str]:
    """`count` devices of the org holding TAG, written directly (setup, not measured)."""
    made = [
        new_device(
            org_id,
            "",
            {"name": f"d{i}", "tags": [TAG], "api_key_hash": credentials.new_api_key()[1]},
        )
        for i in range(count)
    ]

    def write(conn: Tx) -> None:
        for device in made:
            device_store.create(conn, device)

    db.write_sync(write)
    return [device.id for device in made]


async def measure(folder: Path, devices: int, ticks: int) -> dict[str, TickCost]:
    site = open_site(load({"data_dir": str(folder), "log_level": "warning"}, {}))
    services = site.services
    staff_id = services.db.read(staff.first)["id"]
    boss = Principal("staff", staff_id, None)
    org_id = await services.orgs.create(boss, {"name": "Bench", "alias": "bench"})
    device_ids = seed_devices(services.db, org_id, devices)
    bench = Bench(site, Principal("staff", staff_id, None, org_id), device_ids)
    try:
        return {
            kind: TickCost(await bench.releasing(kind, ticks), await bench.holding(kind, ticks))
            for kind in KINDS
        }
    finally:
        services.db.close()


Costs = dict[tuple[int, str], TickCost]


def run(sizes: tuple[int, int], ticks: int, rounds: int) -> Costs:
    """Each size `rounds` times, in turns, each on a fresh folder; the least of each."""
    found: dict[tuple[int, str], list[TickCost]] = {}
    for _ in range(rounds):
        for size in sizes:
            with tempfile.TemporaryDirectory(prefix="edge-bench-ticks-") as work:
                for kind, cost in asyncio.run(measure(Path(work), size, ticks)).items():
                    found.setdefault((size, kind), []).append(cost)
    best = {
        key: TickCost(min(c.releasing for c in costs), min(c.holding for c in costs))
        for key, costs in found.items()
    }
    for (size, kind), cost in best.items():
        print(
            f"scheduler tick CPU, job over {size:,} devices by {kind}: releasing one"
            f" {cost.releasing * 1e6:.0f} us, nothing due {cost.holding * 1e6:.0f} us",
            flush=True,
        )
    return best
