"""What the billing meter costs, at two sizes of organization (10 and 10,000 devices,
users and data entries; 100,000 with --large).

The hot paths get nothing to measure: an HTTP request does no billing work, and the MQTT
reader adds one integer per chunk it reads. What the meter does runs off those paths,
once a minute: this times its flushes in one process on a seeded data folder:

- the day's first flush, which takes the snapshot (one GROUP BY per gauge on a reader
  thread, then one write);
- an ordinary flush: MQTT counts of 100 organizations written in one transaction;
- the flush that closes the day and writes the debits.

Usage: python -m bench.billing [--large]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from bench import rows as out
from bench.data import fill
from edge.accounts.device_kind import new_device
from edge.accounts.user_kind import new_user
from edge.app import open_site
from edge.data.signing import DataSigner
from edge.devices import credentials
from edge.kernel import clock
from edge.kernel.config import load
from edge.kernel.principal import Principal
from storage import devices as device_store
from storage import staff
from storage import users as user_store

CHUNK = 5000


def seed_accounts(site: object, org_id: str, count: int) -> None:
    db = site.services.db  # type: ignore[attr-defined]
    for first in range(0, count, CHUNK):
        upto = min(count, first + CHUNK)
        devices = [
            new_device(org_id, "", {"name": f"d{i}", "api_key_hash": credentials.new_api_key()[1]})
            for i in range(first, upto)
        ]
        users = [
            new_user(org_id, "", {"username": f"u{i}", "email": f"u{i}@bench.test"})
            for i in range(first, upto)
        ]

        def write(c: object, devices: list = devices, users: list = users) -> None:  # type: ignore[type-arg]
            for d in devices:
                device_store.create(c, d)  # type: ignore[arg-type]
            for u in users:
                user_store.create(c, u)  # type: ignore[arg-type]

        db.write_sync(write)


async def measure(folder: Path, size: int) -> dict[str, float]:
    site = open_site(load({"data_dir": str(folder), "log_level": "warning"}, {}))
    services = site.services
    staff_id = services.db.read(staff.first)["id"]
    boss = Principal("staff", staff_id, None)
    org_id = await services.orgs.create(boss, {"name": "Bench", "alias": "bench"})
    others = [
        await services.orgs.create(boss, {"name": f"O{i}", "alias": f"o{i:03d}"}) for i in range(99)
    ]
    seed_accounts(site, org_id, size)
    owner = Principal("staff", staff_id, None, org_id)
    group_id = await services.groups.create(owner, {"name": "g", "create_own_access": False})
    fill(services.db, DataSigner.load_or_create(folder), group_id, size, staff_id)
    meter = services.meter
    times: dict[str, float] = {}
    began = time.perf_counter()
    assert (await meter.flush()).snapshot
    times["snapshot flush"] = time.perf_counter() - began
    for org in [org_id, *others]:
        meter.count(org, 1234)
    began = time.perf_counter()
    assert (await meter.flush()).messages == 1234 * 100
    times["counts flush (100 orgs)"] = time.perf_counter() - began
    clock.advance(timedelta(days=1))
    began = time.perf_counter()
    debits = (await meter.flush()).debits
    times["day-closing flush (snapshot + debits)"] = time.perf_counter() - began
    assert debits >= 100
    clock.reset()
    services.db.close()
    return times


def measure_sizes(sizes: tuple[int, int]) -> dict[int, dict[str, float]]:
    results = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as work:
            results[size] = asyncio.run(measure(Path(work), size))
    small, big = sizes
    print(f"{'billing meter':40} {small:>10,} {big:>10,}   ratio")
    for name in results[small]:
        a, b = results[small][name] * 1000, results[big][name] * 1000
        print(f"{name:40} {a:8.1f}ms {b:8.1f}ms {b / a:7.1f}x")
    return results


def rows(quick: bool) -> list[out.Row]:
    """Flush times at 10 and 1,000 (quick) or 10,000 (full) of everything; lower is better,
    the reference is the small organization."""
    small, big = sizes = (10, 1_000 if quick else 10_000)
    results = measure_sizes(sizes)
    line = out.command("bench.billing", "--size", big)
    return [
        out.Row(
            f"billing {name} at {big:,}",
            results[big][name] * 1000,
            "ms",
            f"at {small:,}",
            results[small][name] * 1000,
            lower_is_better=True,
            command=line,
        )
        for name in results[small]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", action="store_true", help="100,000 instead of 10,000")
    parser.add_argument("--size", type=int, default=10_000, help="the large size")
    args = parser.parse_args()
    measure_sizes((10, 100_000 if args.large else args.size))


if __name__ == "__main__":
    main()
