"""CSR enrollments and certificate renewals through their routes, beside the raw cost of
signing one certificate with the site CA key, in the same run (docs/provisioning.md,
docs/performance.md).

- raw: this process signs client certificates for a fixed EC P-256 key with the site CA's
  key (`SiteCa.sign_client`, the `cryptography` call the route makes) in a loop, on one
  core: the ceiling a renewal can approach.
- route: an `edge serve` process (its own data folder, loopback, with no least time
  between renewals: `device_certificate_renewal_seconds` 0), devices renewing their
  own certificates, `POST /v2/provisioning/renew` with their API key and a CSR made once
  per device: the CSR checked, the certificate signed, the old one superseded and the new
  one registered with its audit event in one durable write. At 1 and 8 concurrent devices.
- enroll: new devices enrolling with one claim of many uses (`max_uses` 100,000), `POST
  /v2/provisioning/enroll` with the claim's ID and secret and a CSR of its own (empty
  subject) each: the claim checked and a use spent, the device and its API key made, the
  certificate signed and registered, with the audit event, in one durable write. At 1 and
  8 concurrent clients, each on a new site of 10 devices (and 20 enrolled to warm up),
  and at 8 on a new site where 2,000 more have enrolled first (untimed); the rows name
  the devices a site had when the timed part began (it grows by those enrolled).
  The keys and CSRs are made before the timed part (a pool of `pool_size(seconds)` per
  measurement; a run ends when its time is up or its pool is spent), so key generation
  is not measured.

The load generator is this process (aiohttp): a renewal costs the server a signature and
a commit, far more than the client's request, and the CPU columns show whose core was full.
Usage: python -m bench.enroll [--seconds S]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from bench import rows as out
from bench import servers
from bench.files import cpu_seconds
from bench.twins import api_call, sign_in
from edge.certificates.ca import SiteCa

SIZES = (1, 8)
Figure = tuple[float, float, float]  # per second, server CPU, generator CPU (cores)
FEW = 10  # devices of the site before the enrollments are measured
MANY = 2_000  # enrolled (untimed) before the last measurement
MAX_USES = 100_000  # the most a claim allows (docs/provisioning.md)
CEILING = 1_000  # enrollments per second a pool is made for: 2.5x the most measured here


def request_for(common_name: str = "") -> str:
    """A CSR (PEM) for a new EC P-256 key, as a device makes it: naming the device, or
    with an empty subject (a device enrolling has no ID yet)."""
    key = ec.generate_private_key(ec.SECP256R1())
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)] if common_name else []
    name = x509.Name(attributes)
    made = x509.CertificateSigningRequestBuilder(name).sign(key, hashes.SHA256())
    return made.public_bytes(serialization.Encoding.PEM).decode()


def raw_signings(seconds: float) -> float:
    """Client certificates the site CA signs per second in this process, one core."""
    with tempfile.TemporaryDirectory() as folder:
        site_ca = SiteCa.open(Path(folder), 365)
        public = ec.generate_private_key(ec.SECP256R1()).public_key()
        done, began = 0, time.perf_counter()
        while time.perf_counter() - began < seconds:
            site_ca.sign_client(public, "device", "org")
            done += 1
        return done / (time.perf_counter() - began)


def devices(base: str, count: int) -> list[tuple[str, str]]:
    """(API key, CSR PEM) of `count` new devices of an org."""
    staff = sign_in(base, password=servers.PASSWORD)
    api_call(base, "POST", "/v2/orgs", staff, {"name": "Enroll", "alias": "enroll"})
    admin = sign_in(base, password=servers.PASSWORD, scope="enroll")
    found = []
    for n in range(count):
        made = api_call(base, "POST", "/v2/devices", admin, {"name": f"d{n}"})["device"]
        found.append((made["api_key"], request_for(made["id"])))
    return found


async def renewals(base: str, held: list[tuple[str, str]], seconds: float) -> int:
    """Renewals done by these devices, each renewing again as soon as it is answered."""
    url = f"{base}/v2/provisioning/renew"
    stop = time.perf_counter() + seconds

    async def device(session: aiohttp.ClientSession, key: str, request: str) -> int:
        done = 0
        headers = {"Authorization": f"Bearer {key}"}
        while time.perf_counter() < stop:
            async with session.post(url, json={"csr": request}, headers=headers) as response:
                await response.read()
                assert response.status == 201, response.status
            done += 1
        return done

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=len(held))) as session:
        counts = await asyncio.gather(*(device(session, k, r) for k, r in held))
    return sum(counts)


def pool_size(seconds: float) -> int:
    """CSRs made for one measurement: more than the route can take in `seconds` at
    `CEILING`, so the run ends on time, not on an empty pool (at least 100)."""
    return max(100, int(seconds * CEILING))


def new_claim(base: str, admin: str) -> tuple[str, str]:
    """(ID, secret) of a claim of `MAX_USES` uses of the org `admin` signs in to."""
    body = {"name": "Bench", "max_uses": MAX_USES}
    made = api_call(base, "POST", "/v2/provisioning/claims", admin, body)["claim"]
    return made["id"], made["secret"]


async def enrollments(
    base: str, claim: tuple[str, str], pool: list[str], size: int, seconds: float
) -> int:
    """Devices enrolled by `size` clients, each sending the next CSR of the pool as soon
    as it is answered, until the time is up or the pool is spent."""
    url = f"{base}/v2/provisioning/enroll"
    stop = time.perf_counter() + seconds
    left = iter(pool)

    async def client(session: aiohttp.ClientSession) -> int:
        done = 0
        for request in left:
            if time.perf_counter() >= stop:
                break
            body = {"claim_id": claim[0], "secret": claim[1], "csr": request}
            async with session.post(url, json=body) as response:
                await response.read()
                assert response.status == 201, response.status
            done += 1
        return done

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=size)) as session:
        counts = await asyncio.gather(*(client(session) for _ in range(size)))
    return sum(counts)


def timed(server: servers.Server, run: Coroutine[Any, Any, int]) -> tuple[int, Figure]:
    """(done, (per second, server CPU, this process's CPU)) of running `run`."""
    server_before, own_before = cpu_seconds(server.pid), time.process_time()
    began = time.perf_counter()
    done = asyncio.run(run)
    elapsed = time.perf_counter() - began
    server_cpu = (cpu_seconds(server.pid) - server_before) / elapsed
    own_cpu = (time.process_time() - own_before) / elapsed
    return done, (done / elapsed, server_cpu, own_cpu)


def enrolling(seconds: float) -> dict[tuple[int, int], Figure]:
    """Enrollments per second by (concurrent clients, devices of the site before the
    run), with the CPU columns: each size on a fresh site of `FEW` devices, then the
    larger size on one where `MANY` more have enrolled first (untimed)."""
    plan = [(size, 0) for size in SIZES] + [(max(SIZES), MANY)]
    return dict(enrolled_on_new_site(seconds, size, fill) for size, fill in plan)


def enrolled_on_new_site(seconds: float, size: int, fill: int) -> tuple[tuple[int, int], Figure]:
    """((size, devices before), figure) of `size` clients enrolling on a new site of
    `FEW` devices and `fill` enrolled before the measurement."""
    with tempfile.TemporaryDirectory() as folder, servers.edge(Path(folder)) as server:
        base = server.url
        devices(base, FEW)
        admin = sign_in(base, password=servers.PASSWORD, scope="enroll")
        claim = new_claim(base, admin)
        before = FEW + asyncio.run(enrollments(base, claim, made(20 + fill), size, 3600.0))
        pool = made(pool_size(seconds))
        return (size, before), timed(server, enrollments(base, claim, pool, size, seconds))[1]


def made(count: int) -> list[str]:
    """`count` CSRs of new keys with empty subjects, made before they are sent."""
    return [request_for() for _ in range(count)]


def through_route(seconds: float) -> dict[int, Figure]:
    """Renewals per second at each size, with the server's and this process's CPU (cores)."""
    found = {}
    unlimited = {"EDGE_DEVICE_CERTIFICATE_RENEWAL_SECONDS": "0"}  # renewing in a loop
    with tempfile.TemporaryDirectory() as folder, servers.edge(Path(folder), unlimited) as server:
        held = devices(server.url, max(SIZES))
        for size in SIZES:
            asyncio.run(renewals(server.url, held[:size], 1.0))  # warm-up
            _, found[size] = timed(server, renewals(server.url, held[:size], seconds))
    return found


@dataclass(frozen=True)
class Measured:
    raw: float
    renewed: dict[int, Figure]  # by concurrent devices
    enrolled: dict[tuple[int, int], Figure]  # by (concurrent clients, devices before)


def enroll_label(size: int, before: int) -> str:
    """A row's name for enrollments at `size` clients on a site of `before` devices."""
    route = "POST /v2/provisioning/enroll"
    return f"CSR enrollments, {size} concurrent, site of {before:,} devices ({route})"


def measure(seconds: float) -> Measured:
    raw = raw_signings(seconds)
    found = Measured(raw, through_route(seconds), enrolling(seconds))
    print(f"{'':44} {'per second':>11} {'of raw':>8} {'server CPU':>11} {'client CPU':>11}")
    print(f"{'raw signing (cryptography, 1 core)':44} {raw:11.0f} {1:8.2f}")
    lines = [(f"renew route, {n} concurrent", f) for n, f in found.renewed.items()]
    lines += [
        (f"enroll route, {n} concurrent, {b:,} devices", f) for (n, b), f in found.enrolled.items()
    ]
    for label, (rate, server_cpu, own_cpu) in lines:
        print(f"{label:44} {rate:11.0f} {rate / raw:8.2f} {server_cpu:10.0%} {own_cpu:10.0%}")
    return found


def rows(quick: bool) -> list[out.Row]:
    """Renewals at 1 and 8 concurrent devices and enrollments at 1 and 8 concurrent
    clients (and at 8 on a site of 2,000 more devices), each beside the raw signing loop
    of the same run."""
    seconds = 3.0 if quick else 10.0
    found = measure(seconds)
    named = [
        (f"certificate renewals, {size} concurrent (POST /v2/provisioning/renew)", figure)
        for size, figure in found.renewed.items()
    ]
    named += [
        (enroll_label(size, before), figure) for (size, before), figure in found.enrolled.items()
    ]
    return [
        out.Row(
            name,
            rate,
            "certificates/s",
            "raw CA signing (cryptography)",
            found.raw,
            load=out.cpu(server_cpu, own_cpu),
            command=out.command("bench.enroll", "--seconds", int(seconds)),
        )
        for name, (rate, server_cpu, own_cpu) in named
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="each measurement's length")
    args = parser.parse_args()
    os.environ.setdefault("EDGE_LOG_LEVEL", "warning")
    measure(args.seconds)


if __name__ == "__main__":
    main()
