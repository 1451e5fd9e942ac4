"""`edge agent provision` as a separate process against the real server: a device enrolls
itself with a claim (from the claim's QR text, or from flags), keeps its own key and what
the server answered owner-only, writes the configuration `edge agent` runs with, and then
runs as the new device, signed in to the broker by its TLS client certificate (the only
listener is MQTT over TLS): a command makes the round trip. Run again, it changes nothing;
a refused claim leaves no identity behind."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.edge_agent.processes import AgentProcess, Bench
from tests.ports import free_port

pytestmark = [pytest.mark.slow, pytest.mark.world(mqtt_tls_port=lambda _: free_port())]

ENROLL = "/v2/provisioning/enroll"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_a_device_provisions_itself_from_the_qr_code_and_runs_as_itself(
    bench: Bench,
) -> None:
    qr = bench.folder / "claim.json"  # the text of the claim's QR code, as an app hands it on
    qr.write_text(
        json.dumps(
            {
                "enroll": bench.served.base + ENROLL,
                "claim_id": bench.claim["id"],
                "secret": bench.claim["secret"],
            }
        )
    )
    code, out, err = await bench.provision("--qr", str(qr), "--name", "Pump 7")
    assert code == 0, err
    identity = json.loads((bench.state / "identity.json").read_text())
    device_id = identity["device_id"]
    assert out.startswith(f"provisioned as device {device_id} (Pump 7)\n")
    assert bench.claim["secret"] not in out + err
    # Its own key, owner-only; the certificate the site CA signed is for that key.
    assert mode(bench.state) == 0o700
    for secret in ("device.key", "api_key", "identity.json"):
        assert mode(bench.state / secret) == 0o600, secret
    key = serialization.load_pem_private_key((bench.state / "device.key").read_bytes(), None)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1"
    certificate = x509.load_pem_x509_certificate((bench.state / "device.pem").read_bytes())
    assert certificate.public_key() == key.public_key()
    ca = x509.load_pem_x509_certificate((bench.state / "ca.pem").read_bytes())
    assert certificate.issuer == ca.subject
    status, reply = await bench.world.call("org_admin", "GET", f"/v2/devices/{device_id}")
    assert status == 200 and reply["device"]["name"] == "Pump 7", reply
    # Run again: already provisioned, nothing done, no second use of the claim.
    code, out, err = await bench.provision("--qr", str(qr))
    assert (code, err) == (0, "") and out.startswith("already provisioned")
    assert await bench.uses() == 1
    # The configuration it wrote runs, with a handler added, as the new device over TLS.
    bench.answer_commands()
    agent = AgentProcess(bench.config_file)
    await agent.start()
    try:
        await agent.line("connected, waiting on")
        await bench.ping(device_id)
        assert await agent.stop() == 0
    finally:
        if agent.process is not None and agent.process.returncode is None:
            agent.process.kill()
            await agent.process.wait()


async def test_a_refused_claim_leaves_no_identity_and_flags_work_once_right(
    bench: Bench,
) -> None:
    server = ("--server", bench.served.base, "--claim-id", bench.claim["id"])
    code, out, err = await bench.provision(*server, "--secret", "ecs_wrong")
    assert code == 1 and out == ""
    refused = "the server refused the enrollment (401): Invalid provisioning claim or secret"
    assert err == f"edge agent: {refused}\n"
    assert not (bench.state / "identity.json").exists() and not bench.config_file.exists()
    code, out, err = await bench.provision(*server, "--secret", bench.claim["secret"])
    assert code == 0, err
    assert await bench.uses() == 1
    written = bench.config_file.read_text()
    assert f'server = "{bench.served.base}"' in written


async def test_provisioning_without_a_claim_is_refused_in_one_line(bench: Bench) -> None:
    code, out, err = await bench.provision("--server", bench.served.base)
    assert (code, out) == (2, "")
    assert err == "edge agent: --claim-id and --secret (or --qr): the claim is required\n"
