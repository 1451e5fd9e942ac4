"""Certificate renewals through the route, beside the raw cost of signing one certificate
with the site CA key, in the same run (docs/provisioning.md, docs/performance.md).

- raw: this process signs client certificates for a fixed EC P-256 key with the site CA's
  key (`SiteCa.sign_client`, the `cryptography` call the route makes) in a loop, on one
  core: the ceiling a renewal can approach.
- route: an `edge serve` process (its own data folder, loopback, with no least time
  between renewals: `device_certificate_renewal_seconds` 0), devices renewing their
  own certificates, `POST /v2/provisioning/renew` with their API key and a CSR made once
  per device: the CSR checked, the certificate signed, the old one superseded and the new
  one registered with its audit event in one durable write. At 1 and 8 concurrent devices.

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
from pathlib import Path

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


def request_for(device_id: str) -> str:
    """A CSR (PEM) for a new EC P-256 key of this device, as a device makes it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, device_id)])
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


def through_route(seconds: float) -> dict[int, tuple[float, float, float]]:
    """Renewals per second at each size, with the server's and this process's CPU (cores)."""
    found = {}
    unlimited = {"EDGE_DEVICE_CERTIFICATE_RENEWAL_SECONDS": "0"}  # renewing in a loop
    with tempfile.TemporaryDirectory() as folder, servers.edge(Path(folder), unlimited) as server:
        held = devices(server.url, max(SIZES))
        for size in SIZES:
            asyncio.run(renewals(server.url, held[:size], 1.0))  # warm-up
            server_before, own_before = cpu_seconds(server.pid), time.process_time()
            began = time.perf_counter()
            done = asyncio.run(renewals(server.url, held[:size], seconds))
            elapsed = time.perf_counter() - began
            server_cpu = (cpu_seconds(server.pid) - server_before) / elapsed
            own_cpu = (time.process_time() - own_before) / elapsed
            found[size] = (done / elapsed, server_cpu, own_cpu)
    return found


def measure(seconds: float) -> tuple[float, dict[int, tuple[float, float, float]]]:
    raw = raw_signings(seconds)
    route = through_route(seconds)
    print(f"{'':34} {'per second':>11} {'of raw':>8} {'server CPU':>11} {'client CPU':>11}")
    print(f"{'raw signing (cryptography, 1 core)':34} {raw:11.0f} {1:8.2f}")
    for size, (rate, server_cpu, own_cpu) in route.items():
        label = f"renew route, {size} concurrent"
        print(f"{label:34} {rate:11.0f} {rate / raw:8.2f} {server_cpu:10.0%} {own_cpu:10.0%}")
    return raw, route


def rows(quick: bool) -> list[out.Row]:
    """Renewals through the route at 1 and 8 concurrent devices, each beside the raw
    signing loop of the same run."""
    seconds = 3.0 if quick else 10.0
    raw, route = measure(seconds)
    return [
        out.Row(
            f"certificate renewals, {size} concurrent (POST /v2/provisioning/renew)",
            rate,
            "certificates/s",
            "raw CA signing (cryptography)",
            raw,
            load=out.cpu(server_cpu, own_cpu),
            command=out.command("bench.enroll", "--seconds", int(seconds)),
        )
        for size, (rate, server_cpu, own_cpu) in route.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="each measurement's length")
    args = parser.parse_args()
    os.environ.setdefault("EDGE_LOG_LEVEL", "warning")
    measure(args.seconds)


if __name__ == "__main__":
    main()
