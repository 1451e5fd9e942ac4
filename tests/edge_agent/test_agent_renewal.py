"""The agent keeps its certificate renewed, against the real server, as a separate process.

The server issues certificates of one day (`device_certificate_days`), and the agent is
renews one with less than 30 days left (its default), so the one a device enrolls with is due:
the agent renews it at start, without an admin. Its files are a matching pair throughout
(loaded and compared), the registry shows the old certificate superseded, the agent keeps
working over MQTT TLS with the new one, and the broker refuses the old one. Over https://
the certificate itself signs the renewal in; a failed renewal keeps the working pair and
is tried again; a kill in the middle leaves what the next start finishes.
"""

from __future__ import annotations

import json
import signal
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from edge.ops import tls
from tests import csrs
from tests.edge_agent.processes import AgentProcess, Bench, until
from tests.embedded_broker.clients import Client
from tests.ports import free_port

pytestmark = [
    pytest.mark.slow,
    pytest.mark.world(
        mqtt_tls_port=lambda _: free_port(),
        tls_local_ca=True,
        device_certificate_days=1,
        device_certificate_renewal_seconds=0,
    ),
]
RENEWED = r"certificate renewed: serial ([0-9a-f]+), until "


def serial(pem_file: Path) -> str:
    return format(x509.load_pem_x509_certificate(pem_file.read_bytes()).serial_number, "x")


def matching(certificate_file: Path, key_file: Path) -> bool:
    """Loads both: is the certificate for the key?"""
    certificate = x509.load_pem_x509_certificate(certificate_file.read_bytes())
    key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    return certificate.public_key() == key.public_key()


class Device:
    """A device provisioned from the bench's claim, its old pair kept aside."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.agent = AgentProcess(bench.config_file)
        self.id = ""

    @property
    def pem(self) -> Path:
        return self.bench.state / "device.pem"

    @property
    def key(self) -> Path:
        return self.bench.state / "device.key"

    async def provision(self) -> None:
        claim = self.bench.claim
        code, _, err = await self.bench.provision(
            "--server",
            self.bench.served.base,
            "--claim-id",
            claim["id"],
            "--secret",
            claim["secret"],
        )
        assert code == 0, err
        self.id = json.loads((self.bench.state / "identity.json").read_text())["device_id"]
        for name in ("device.pem", "device.key"):
            (self.bench.folder / f"old-{name}").write_bytes((self.bench.state / name).read_bytes())

    @property
    def old(self) -> tuple[Path, Path]:
        return self.bench.folder / "old-device.pem", self.bench.folder / "old-device.key"

    async def statuses(self) -> dict[str, str]:
        """The registry's certificates of the device, as its org admin sees them."""
        path = f"/v2/provisioning/devices/{self.id}/certificates"
        status, body = await self.bench.world.call("org_admin", "GET", path)
        assert status == 200, body
        return {c["serial"]: c["status"] for c in body["certificates"]}

    def assert_renewed_pair(self, new_serial: str) -> None:
        assert matching(self.pem, self.key) and serial(self.pem) == new_serial
        assert self.key.read_bytes() != self.old[1].read_bytes()  # a new key, not the old one
        assert stat.S_IMODE(self.key.stat().st_mode) == 0o600
        assert sorted(p.name for p in self.bench.state.glob("*.next")) == []

    async def assert_old_refused(self) -> None:
        port = self.bench.served.config.mqtt_tls_port
        ca = self.bench.state / "ca.pem"
        old = Client(port, "old-pair", tls=(ca, *self.old))
        assert (await old.connect())[0] == 5  # not authorized

    def serve_from(self, server: str, more: str = "") -> None:
        """The configuration names `server` rather than the plain-HTTP one it enrolled with."""
        text = self.bench.config_file.read_text()
        enrolled = f'server = "{self.bench.served.base}"'
        assert enrolled in text
        self.bench.config_file.write_text(text.replace(enrolled, f'server = "{server}"') + more)

    async def renew_elsewhere(self) -> str:
        """A renewal by the device's API key whose answer the agent never saw (as when it
        was killed before writing it): the serial of the certificate it would have had."""
        body = {"csr": csrs.pem(csrs.request(csrs.ec_key(), self.id))}
        api_key = (self.bench.state / "api_key").read_text().strip()
        headers = {"Authorization": f"Bearer {api_key}"}
        url = self.bench.served.base + "/v2/provisioning/renew"
        async with aiohttp.ClientSession() as session:
            async with session.post(url, json=body, headers=headers) as response:
                answer = await response.json()
                assert response.status == 201, answer
                return str(answer["certificate"]["serial"])

    async def stop(self) -> None:
        process = self.agent.process
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()


@pytest.fixture
async def device(bench: Bench) -> AsyncIterator[Device]:
    made = Device(bench)
    await made.provision()
    # Enrolled and renewed certificates last a day (device_certificate_days), under the
    # agent's 30 days: due at once, and the next look is an hour away.
    bench.answer_commands()
    yield made
    await made.stop()


async def test_the_agent_renews_its_certificate_by_its_api_key_and_keeps_working(
    device: Device,
) -> None:
    old_serial = serial(device.pem)
    await device.agent.start()
    new_serial = (await device.agent.line(RENEWED))[1]
    device.assert_renewed_pair(new_serial)
    statuses = await device.statuses()
    assert statuses == {new_serial: "active", old_serial: "superseded"}
    await device.agent.line("connected, waiting on")  # again, with the new pair
    await device.bench.ping(device.id)
    await device.assert_old_refused()
    assert await device.agent.stop() == 0


@pytest.fixture
async def https(bench: Bench) -> AsyncIterator[str]:
    """The same server over HTTPS too (as `edge serve` with tls_local_ca), which asks for
    an optional client certificate."""
    assert bench.world.api is not None
    runner = bench.world.api.client.server.runner
    assert runner is not None
    port = free_port()
    context = tls.server_context(bench.served.config)
    site = web.TCPSite(runner, "127.0.0.1", port, ssl_context=context)
    await site.start()
    yield f"https://localhost:{port}"
    await site.stop()


async def test_over_https_the_certificate_itself_signs_the_renewal_in(
    device: Device, https: str
) -> None:
    """A wrong API key: only the certificate (mutual TLS) can have renewed it."""
    wrong = device.bench.folder / "wrong_key"
    wrong.write_text("edk_wrong\n")
    wrong.chmod(0o600)
    device.serve_from(https, '\n[credentials]\napi_key_file = "wrong_key"\n')
    old_serial = serial(device.pem)
    await device.agent.start()
    new_serial = (await device.agent.line(RENEWED))[1]
    device.assert_renewed_pair(new_serial)
    assert await device.statuses() == {new_serial: "active", old_serial: "superseded"}
    await device.agent.line("connected, waiting on")
    await device.bench.ping(device.id)
    await device.assert_old_refused()


async def test_a_lost_answer_is_made_good_by_the_api_key(device: Device, https: str) -> None:
    """The working certificate was superseded by a renewal the agent never saw: over
    https:// the server refuses that certificate, so the API key renews it."""
    old_serial = serial(device.pem)
    lost = await device.renew_elsewhere()
    device.serve_from(https)
    await device.agent.start()
    new_serial = (await device.agent.line(RENEWED))[1]
    device.assert_renewed_pair(new_serial)
    statuses = await device.statuses()
    assert statuses == {new_serial: "active", lost: "superseded", old_serial: "superseded"}
    await device.agent.line("connected, waiting on")
    await device.bench.ping(device.id)


async def test_a_failed_renewal_keeps_the_working_pair_and_is_tried_again(
    device: Device,
) -> None:
    old_serial = serial(device.pem)
    with device.bench.config_file.open("a") as config:
        config.write("\n[reconnect]\nmin_seconds = 0.2\nmax_seconds = 1\n")
    await device.bench.served.stop()  # the server is away: the renewal cannot happen
    await device.agent.start()
    await device.agent.said("certificate renewal: cannot reach")
    await device.agent.said("certificate renewal: cannot reach")  # and again, later
    assert matching(device.pem, device.key) and serial(device.pem) == old_serial
    assert device.key.read_bytes() == device.old[1].read_bytes()  # untouched
    waiting = (device.bench.state / "device.key.next").read_bytes()  # the new key, beside
    await device.bench.served.start()
    new_serial = (await device.agent.line(RENEWED))[1]
    device.assert_renewed_pair(new_serial)
    assert device.key.read_bytes() == waiting  # the key the failed attempts made
    assert await device.statuses() == {new_serial: "active", old_serial: "superseded"}
    await device.agent.line("connected, waiting on")
    await device.bench.ping(device.id)


async def test_a_kill_during_the_renewal_leaves_a_pair_the_next_start_uses(
    device: Device,
) -> None:
    old_serial = serial(device.pem)
    await device.agent.start()

    async def issued() -> bool:
        return len(await device.statuses()) == 2

    await until(issued, "the server issued the new certificate")
    await device.agent.stop(signal.SIGKILL)  # somewhere in the renewal, or just after
    pending = device.bench.state / "device.pem.next"
    next_key = device.bench.state / "device.key.next"
    assert matching(device.pem, device.key) or matching(
        pending, next_key if next_key.exists() else device.key
    ), "neither the pair nor the pending pair matches"
    await device.agent.start()  # it finishes what was begun, and renews again: still due
    new_serial = (await device.agent.line(RENEWED))[1]
    device.assert_renewed_pair(new_serial)
    statuses = await device.statuses()
    assert statuses[new_serial] == "active" and statuses[old_serial] == "superseded"
    assert list(statuses.values()).count("active") == 1
    await device.agent.line("connected, waiting on")
    await device.bench.ping(device.id)
