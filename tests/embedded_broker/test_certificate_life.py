"""A device's certificate over its life on every listener that takes one (docs/
provisioning.md): the real server with its broker (tests/embedded_broker/conftest.py) and
its HTTPS listener on free loopback ports, the site CA's certificates throughout.

- a revoked certificate is refused by MQTT over TLS, WSS and HTTPS, and a connection open
  on it is closed;
- a device renews its own certificate before it ends, over HTTPS with that certificate:
  the new one works everywhere, the old one nowhere;
- a device that enrolled itself (REST) holds a certificate of `device_certificate_days`,
  recorded, listed and revoked as every other;
- EST (RFC 7030) cacerts, simpleenroll (a claim as HTTP Basic) and simplereenroll with
  `curl` and `openssl`, and with `cryptography`; EST over plain HTTP is not served, and
  takes no other credential;
- the bundle an admin fetches connects over MQTT/TLS.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import hashlib
import io
import json
import ssl
import subprocess
import zipfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs7

from edge.accounts.device_certificates import ORG_SUSPENDED
from edge.certificates import issuing
from edge.kernel import clock
from edge.ops import tls
from edge.provisioning.enrollment import BLOCKED
from edge.provisioning.enrollment import REFUSED as CLAIM_REFUSED
from tests import csrs
from tests.embedded_broker.conftest import Device, Harness
from tests.ports import free_port

pytestmark = pytest.mark.world(
    tls_local_ca=True, device_certificate_days=20, device_certificate_renewal_seconds=0
)
REFUSED = {"message": "Client certificate not accepted"}


@dataclass
class Https:
    port: int
    ca_file: Path

    def context(
        self, device: Device | None = None, files: tuple[Path, Path] | None = None
    ) -> ssl.SSLContext:
        made = ssl.create_default_context(cafile=str(self.ca_file))
        if device is not None:
            made.load_cert_chain(device.cert_file, device.key_file)
        elif files is not None:
            made.load_cert_chain(*files)
        return made

    async def call(
        self, method: str, path: str, context: ssl.SSLContext, **kw: Any
    ) -> tuple[int, Any, dict[str, str]]:
        async with aiohttp.ClientSession() as session:
            url = f"https://localhost:{self.port}{path}"
            async with session.request(method, url, ssl=context, **kw) as response:
                if response.content_type == "application/json":
                    body: Any = await response.json()
                else:
                    body = await response.read()
                return response.status, body, dict(response.headers)


@pytest.fixture
async def https(broker: Harness) -> AsyncIterator[Https]:
    """The same application served over HTTPS too, as `edge serve` does with tls_local_ca."""
    runner = broker.app_api.client.server.runner
    assert runner is not None
    port = free_port()
    site = web.TCPSite(
        runner, "127.0.0.1", port, ssl_context=tls.server_context(broker.site.services.config)
    )
    await site.start()
    yield Https(port, broker.ca_file)
    await site.stop()


async def _revoke(broker: Harness, device: Device, reason: str = "key_compromise") -> None:
    serial = format(
        x509.load_pem_x509_certificate(device.cert_file.read_bytes()).serial_number, "x"
    )
    path = f"/v2/provisioning/devices/{device.id}/certificates/{serial}/revoke"
    status, body = await broker.call("POST", path, json={"reason": reason})
    assert status == 200, body


async def test_a_revoked_certificate_is_refused_by_mqtt_tls_wss_and_https(
    broker: Harness, https: Https
) -> None:
    device = await broker.device("dev1")
    over_tls = broker.client("t", "mqtt-tls", tls=broker.tls(device))
    assert (await over_tls.connect())[0] == 0
    over_wss = broker.client("w", "mqtt-wss", tls=broker.tls(device))
    assert (await over_wss.connect())[0] == 0
    status, body, _ = await https.call("GET", f"/v2/devices/{device.id}", https.context(device))
    assert (status, body["device"]["id"]) == (200, device.id)  # the certificate is its credential
    await _revoke(broker, device)
    await over_tls.disconnected()
    await over_wss.disconnected()
    assert (await broker.client("t2", "mqtt-tls", tls=broker.tls(device)).connect())[0] == 5
    assert (await broker.client("w2", "mqtt-wss", tls=broker.tls(device)).connect())[0] == 5
    status, body, _ = await https.call("GET", f"/v2/devices/{device.id}", https.context(device))
    assert (status, body) == (401, REFUSED)
    by_key = {"Authorization": f"Bearer {device.api_key}"}  # its API key is not touched
    status, _, _ = await https.call(
        "GET", f"/v2/devices/{device.id}", https.context(), headers=by_key
    )
    assert status == 200


async def test_a_superseded_certificate_is_refused_on_https(broker: Harness, https: Https) -> None:
    device = await broker.device("dev1")
    old = (device.cert_file, device.key_file)
    await broker.reset_certificate(device)
    status, body, _ = await https.call("GET", "/v2/devices", https.context(files=old))
    assert (status, body) == (401, REFUSED)
    status, _, _ = await https.call("GET", "/v2/devices", https.context(device))
    assert status == 200


async def test_without_a_client_certificate_https_asks_for_a_credential(https: Https) -> None:
    status, body, seen = await https.call("GET", "/v2/devices", https.context())
    assert status == 401 and body["message"].startswith("Authentication required")
    assert seen["WWW-Authenticate"] == 'Bearer realm="edge"'  # EST enroll's Basic is its own
    status, _, _ = await https.call("GET", "/v2/health", https.context())
    assert status == 200


def _renewal(device: Device) -> tuple[Any, dict[str, str]]:
    key = csrs.ec_key()
    return key, {"csr": csrs.pem(csrs.request(key, device.id))}


async def test_a_device_renews_before_expiry_over_https_with_its_certificate(
    broker: Harness, https: Https
) -> None:
    device = await broker.device("dev1")
    held = x509.load_pem_x509_certificate(device.cert_file.read_bytes())
    assert (held.not_valid_after_utc - held.not_valid_before_utc).days == 20  # the setting
    live = broker.client("t", "mqtt-tls", tls=broker.tls(device))
    assert (await live.connect())[0] == 0
    key, body = _renewal(device)
    old = (device.cert_file, device.key_file)
    status, reply, _ = await https.call(
        "POST", "/v2/provisioning/renew", https.context(device), json=body
    )
    assert status == 201, reply
    new_pem = reply["certificate"]["certificate"]
    renewed = x509.load_pem_x509_certificate(new_pem.encode())
    assert renewed.not_valid_after_utc >= held.not_valid_after_utc
    assert renewed.serial_number != held.serial_number
    await live.disconnected()  # the connection made with the old certificate ends
    device.cert_file.parent.mkdir(exist_ok=True)
    device.cert_file = old[0].with_name(f"{device.id}-renewed.pem")
    device.key_file = old[1].with_name(f"{device.id}-renewed.key")
    device.cert_file.write_text(new_pem)
    device.key_file.write_bytes(csrs.key_pem(key))
    assert (await broker.client("t2", "mqtt-tls", tls=broker.tls(device)).connect())[0] == 0
    status, _, _ = await https.call("GET", "/v2/devices", https.context(device))
    assert status == 200
    status, body_old, _ = await https.call("GET", "/v2/devices", https.context(files=old))
    assert (status, body_old) == (401, REFUSED)
    assert (await broker.client("t3", "mqtt-tls", tls=(broker.ca_file, *old)).connect())[0] == 5


async def _held_request(
    broker: Harness,
    https: Https,
    context: ssl.SSLContext,
    head: bytes,
    body: bytes,
    between: Callable[[], Awaitable[Any]],
) -> bytes:
    """A request whose headers arrive, then `between` runs, then its body: the guard has
    taken the credential (the device is marked seen) before the body is in."""
    seen = broker.site.services.last_seen
    await seen.flush()
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", https.port, ssl=context, server_hostname="localhost"
    )
    writer.write(head % len(body))
    await writer.drain()
    while not seen.pending:  # the guard has accepted the credential
        await asyncio.sleep(0.01)
    await between()
    writer.write(body)
    await writer.drain()
    answer = await reader.read(65536)
    writer.close()
    return answer


RENEW_HEAD = (
    b"POST /v2/provisioning/renew HTTP/1.1\r\nHost: localhost\r\n%s"
    b"Content-Type: application/json\r\nContent-Length: %%d\r\n\r\n"
)
REENROLL_HEAD = (
    b"POST /.well-known/est/simplereenroll HTTP/1.1\r\nHost: localhost\r\n"
    b"Content-Type: application/pkcs10\r\nContent-Length: %d\r\n\r\n"
)


async def _issued_none_since(broker: Harness, device: Device, statuses: list[str]) -> None:
    path = f"/v2/provisioning/devices/{device.id}/certificates"
    status, listed = await broker.call("GET", path)
    assert status == 200 and [c["status"] for c in listed["certificates"]] == statuses


async def test_a_certificate_revoked_while_the_renewal_body_arrives_renews_nothing(
    broker: Harness, https: Https
) -> None:
    """REST renewal and EST re-enrollment check the certificate again where the new one
    is recorded: revoked after the guard took it, before the body came, it issues none."""
    device = await broker.device("dev1")
    renewal = json.dumps(_renewal(device)[1]).encode()
    reenroll = base64.encodebytes(csrs.der(csrs.request(csrs.ec_key(), None)))
    for head, body in ((RENEW_HEAD % b"", renewal), (REENROLL_HEAD, reenroll)):
        await broker.reset_certificate(device)
        answer = await _held_request(
            broker, https, https.context(device), head, body, lambda: _revoke(broker, device)
        )
        assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]
        assert b'{"message":"The credential of this request is no longer in force"}' in answer
    await _issued_none_since(broker, device, ["revoked", "revoked", "superseded"])


async def test_an_api_key_reset_while_the_renewal_body_arrives_renews_nothing(
    broker: Harness, https: Https
) -> None:
    """A thief's renewal with a key the admin resets (and then re-keys the device) while
    the body is on its way supersedes nothing: the admin's fresh certificate stays."""
    device = await broker.device("dev1")
    stolen = b"X-API-Key: %s\r\n" % device.api_key.encode()

    async def rekey() -> None:
        await broker.reset_api_key(device)
        await broker.reset_certificate(device)

    body = json.dumps(_renewal(device)[1]).encode()
    answer = await _held_request(broker, https, https.context(), RENEW_HEAD % stolen, body, rekey)
    assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]
    await _issued_none_since(broker, device, ["active", "superseded"])
    assert (await broker.client("t", "mqtt-tls", tls=broker.tls(device)).connect())[0] == 0


@pytest.mark.world(device_certificate_renewal_seconds=60)
async def test_renewals_held_open_together_issue_one_certificate(
    broker: Harness, https: Https
) -> None:
    """The renewal limit is read where the certificate is recorded: of renewals (by API
    key, which a renewal leaves in force) whose bodies all arrive once each passed the
    guard, one is issued, the rest are 429s."""
    device = await broker.device("dev1")
    key = b"X-API-Key: %s\r\n" % device.api_key.encode()
    clock.advance(dt.timedelta(seconds=61))
    seen = broker.site.services.last_seen
    await seen.flush()
    held = []
    for _ in range(4):
        body = json.dumps(_renewal(device)[1]).encode()
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", https.port, ssl=https.context(), server_hostname="localhost"
        )
        writer.write(RENEW_HEAD % key % len(body))
        await writer.drain()
        while not seen.pending:
            await asyncio.sleep(0.01)
        await seen.flush()
        held.append((reader, writer, body))
    for _, writer, body in held:
        writer.write(body)
    answers = [await reader.read(12) for reader, _, _ in held]
    for _, writer, _ in held:
        writer.close()
    assert sorted(a[9:12] for a in answers) == [b"201", b"429", b"429", b"429"]
    await _issued_none_since(broker, device, ["active", "superseded"])


async def test_a_suspended_organizations_devices_get_no_new_credentials(
    broker: Harness, https: Https
) -> None:
    """Its devices' certificates keep working (docs/sign-in.md), but renewal and EST
    re-enrollment are 401s and the bundle (staff asking) a 403: no new credentials."""
    device = await broker.device("dev1")
    staff = await broker.app_api.token()
    org = f"/v2/orgs/{broker.org_id}"
    status, reply = await broker.app_api.call("PATCH", org, staff, json={"is_active": False})
    assert status == 200, reply
    status, _, _ = await https.call("GET", f"/v2/devices/{device.id}", https.context(device))
    assert status == 200
    status, reply, _ = await https.call(
        "POST", "/v2/provisioning/renew", https.context(device), json=_renewal(device)[1]
    )
    assert (status, reply) == (401, {"message": ORG_SUSPENDED})
    status, reply, _ = await https.call(
        "POST",
        "/.well-known/est/simplereenroll",
        https.context(device),
        data=base64.b64encode(csrs.der(csrs.request(csrs.ec_key(), None))),
        headers={"Content-Type": "application/pkcs10"},
    )
    assert (status, reply) == (401, {"message": ORG_SUSPENDED})
    scoped = await broker.app_api.token(scope=broker.org_id)
    status, reply = await broker.app_api.call("GET", f"/v2/devices/{device.id}/bundle", scoped)
    assert (status, reply) == (403, {"message": ORG_SUSPENDED})
    listed = f"/v2/provisioning/devices/{device.id}/certificates"
    status, reply = await broker.app_api.call("GET", listed, scoped)
    assert status == 200 and [c["status"] for c in reply["certificates"]] == ["active"]


# -- enrollment -----------------------------------------------------------------------------


async def _claim(broker: Harness, **body: Any) -> dict[str, Any]:
    status, reply = await broker.call(
        "POST", "/v2/provisioning/claims", json={"name": "Line 4", **body}
    )
    assert status == 201, reply
    return dict(reply["claim"])


def _files(folder: Path, certificate: str, key: Any) -> tuple[Path, Path]:
    """The certificate and key files of a device that enrolled, for a TLS client."""
    cert_file, key_file = folder / "enrolled.pem", folder / "enrolled.key"
    cert_file.write_text(certificate)
    key_file.write_bytes(csrs.key_pem(key))
    return cert_file, key_file


async def test_an_enrolled_devices_certificate_is_recorded_as_every_other(
    broker: Harness, tmp_path: Path
) -> None:
    """It lasts `device_certificate_days` (20 here, not the CA's ten years), is in the
    registry with its fingerprint and validity, listed, and once revoked is refused by
    MQTT over TLS."""
    claim, key = await _claim(broker), csrs.ec_key()
    body = {
        "claim_id": claim["id"],
        "secret": claim["secret"],
        "csr": csrs.pem(csrs.request(key, None)),
    }
    status, enrolled = await broker.app_api.call("POST", "/v2/provisioning/enroll", json=body)
    assert status == 201, enrolled
    cert = x509.load_pem_x509_certificate(enrolled["certificate"].encode())
    assert (cert.not_valid_after_utc - cert.not_valid_before_utc).days == 20
    path = f"/v2/provisioning/devices/{enrolled['id']}/certificates"
    status, listed = await broker.call("GET", path)
    assert status == 200, listed
    (row,) = listed["certificates"]
    der = cert.public_bytes(serialization.Encoding.DER)
    assert (row["serial"], row["status"]) == (format(cert.serial_number, "x"), "active")
    assert row["fingerprint"] == hashlib.sha256(der).hexdigest()
    assert row["not_after"].startswith(cert.not_valid_after_utc.strftime("%Y-%m-%dT%H:%M:%S"))
    files = (broker.ca_file, *_files(tmp_path, enrolled["certificate"], key))
    assert (await broker.client("e", "mqtt-tls", tls=files).connect())[0] == 0
    status, revoked = await broker.call(
        "POST", f"{path}/{row['serial']}/revoke", json={"reason": "key_compromise"}
    )
    assert (status, revoked["certificate"]["status"]) == (200, "revoked"), revoked
    assert (await broker.client("e2", "mqtt-tls", tls=files).connect())[0] == 5


# -- EST ------------------------------------------------------------------------------------


def _run(*args: str, stdin: bytes | None = None) -> bytes:
    done = subprocess.run(args, input=stdin, capture_output=True, check=True, timeout=60)
    return done.stdout


async def _curl(*args: str) -> bytes:
    """curl in a thread: the server it talks to runs on this loop."""
    return await asyncio.to_thread(_run, "curl", "-sS", "--fail-with-body", *args)


async def test_est_cacerts_with_curl_and_openssl(https: Https) -> None:
    url = f"https://localhost:{https.port}/.well-known/est/cacerts"
    answer = await _curl("--cacert", str(https.ca_file), "-D", "-", url)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"content-type: application/pkcs7-mime; smime-type=certs-only" in head.lower()
    assert b"content-transfer-encoding: base64" in head.lower()
    printed = _run(
        "openssl", "pkcs7", "-inform", "DER", "-print_certs", stdin=base64.b64decode(body)
    )
    assert b"subject=CN = edge site CA" in printed
    assert printed.count(b"-----BEGIN CERTIFICATE-----") == 1


async def test_est_reenroll_with_curl_and_openssl(
    broker: Harness, https: Https, tmp_path: Path
) -> None:
    device = await broker.device("dev1")
    key_file, csr_file = tmp_path / "new.key", tmp_path / "new.b64"
    _run("openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(key_file))
    der = _run(
        "openssl",
        "req",
        "-new",
        "-key",
        str(key_file),
        "-subj",
        f"/CN={device.id}",
        "-outform",
        "DER",
    )
    csr_file.write_bytes(base64.encodebytes(der))
    answer = await _curl(
        "--cacert",
        str(https.ca_file),
        "--cert",
        str(device.cert_file),
        "--key",
        str(device.key_file),
        "-H",
        "Content-Type: application/pkcs10",
        "--data-binary",
        f"@{csr_file}",
        f"https://localhost:{https.port}/.well-known/est/simplereenroll",
    )
    printed = _run(
        "openssl", "pkcs7", "-inform", "DER", "-print_certs", stdin=base64.b64decode(answer)
    )
    assert f"subject=O = {broker.org_id}, CN = {device.id}".encode() in printed
    new_cert = tmp_path / "new.crt"
    new_cert.write_bytes(printed)
    public = _run("openssl", "x509", "-in", str(new_cert), "-noout", "-pubkey")
    assert public == _run("openssl", "pkey", "-in", str(key_file), "-pubout")  # its own key
    renewed = broker.client("n", "mqtt-tls", tls=(broker.ca_file, new_cert, key_file))
    assert (await renewed.connect())[0] == 0
    again = await asyncio.to_thread(
        subprocess.run,
        [
            "curl",
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--cacert",
            str(https.ca_file),
            "--cert",
            str(device.cert_file),
            "--key",
            str(device.key_file),
            "-H",
            "Content-Type: application/pkcs10",
            "--data-binary",
            f"@{csr_file}",
            f"https://localhost:{https.port}/.well-known/est/simplereenroll",
        ],
        capture_output=True,
        timeout=60,
    )
    assert again.stdout == b"401"  # the certificate it held is superseded


async def test_est_reenroll_with_cryptography(broker: Harness, https: Https) -> None:
    device = await broker.device("dev1")
    status, body, _ = await https.call("GET", "/.well-known/est/cacerts", https.context())
    assert status == 200
    (ca_cert,) = pkcs7.load_der_pkcs7_certificates(base64.b64decode(body))
    assert ca_cert == broker.site.services.site_ca.cert
    key = csrs.ec_key()
    request = base64.b64encode(csrs.der(csrs.request(key, None)))
    headers = {"Content-Type": "application/pkcs10"}
    status, body, seen = await https.call(
        "POST",
        "/.well-known/est/simplereenroll",
        https.context(device),
        data=request,
        headers=headers,
    )
    assert status == 200, body
    assert seen["Content-Type"] == "application/pkcs7-mime; smime-type=certs-only"
    (issued,) = pkcs7.load_der_pkcs7_certificates(base64.b64decode(body))
    assert issued.public_key() == key.public_key()
    issued.verify_directly_issued_by(ca_cert)


async def test_est_refusals(broker: Harness, https: Https) -> None:
    device = await broker.device("dev1")
    good = base64.b64encode(csrs.der(csrs.request(csrs.ec_key(), device.id)))
    pkcs10 = {"Content-Type": "application/pkcs10"}
    path = "/.well-known/est/simplereenroll"
    status, body, seen = await https.call("POST", path, https.context(), data=good, headers=pkcs10)
    assert status == 401 and "current client certificate" in body["message"]
    assert "WWW-Authenticate" not in seen  # no HTTP scheme carries a client certificate
    pem = csrs.pem(csrs.request(csrs.ec_key(), device.id)).encode()
    for junk in (pem + b"junk\n", pem + csrs.pem(csrs.request(csrs.ec_key(), None)).encode()):
        status, body, _ = await https.call(
            "POST", path, https.context(device), data=junk, headers=pkcs10
        )
        assert (status, body) == (
            400,
            {"message": "csr: must be one PEM certificate signing request (PKCS#10)"},
        )
    too_large = b"A" * (issuing.MAX_BYTES * 2 + 1)
    for est, headers in ((path, pkcs10), ("/.well-known/est/simpleenroll", _basic("c", "s"))):
        status, body, _ = await https.call(
            "POST", est, https.context(device), data=too_large, headers=headers
        )
        assert (status, body) == (
            413,
            {"message": f"Request body is larger than {issuing.MAX_BYTES * 2} bytes"},
        )
    by_key = {**pkcs10, "Authorization": f"Bearer {device.api_key}"}  # EST takes no other
    status, body, _ = await https.call("POST", path, https.context(), data=good, headers=by_key)
    assert status == 401
    status, body, _ = await https.call(
        "POST", path, https.context(device), data=b"!!", headers=pkcs10
    )
    assert (status, body) == (400, {"message": "csr: must be base64 of a DER request"})
    other = base64.b64encode(csrs.der(csrs.request(csrs.ec_key(), "another")))
    status, body, _ = await https.call(
        "POST", path, https.context(device), data=other, headers=pkcs10
    )
    assert (status, body["message"]) == (
        400,
        "csr: its subject names another device (leave the subject empty)",
    )
    status, body, _ = await https.call(
        "POST", path, https.context(device), data=good, headers={"Content-Type": "text/plain"}
    )
    assert status == 400
    await _revoke(broker, device)
    status, body, _ = await https.call(
        "POST", path, https.context(device), data=good, headers=pkcs10
    )
    assert (status, body) == (401, REFUSED)


def _basic(claim_id: str, secret: str) -> dict[str, str]:
    """HTTP Basic with the claim (user = claim ID, password = secret), and a CSR's type."""
    encoded = base64.b64encode(f"{claim_id}:{secret}".encode()).decode()
    return {"Content-Type": "application/pkcs10", "Authorization": f"Basic {encoded}"}


async def test_est_enroll_with_curl_and_openssl(
    broker: Harness, https: Https, tmp_path: Path
) -> None:
    """A claim as `curl -u claim:secret` (no client certificate), a request `openssl req`
    made: the device is made, and signs in with the certificate alone, on MQTT over TLS and
    on HTTPS (EST carries no API key)."""
    claim = await _claim(broker)
    key_file, csr_file = tmp_path / "own.key", tmp_path / "own.b64"
    _run("openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(key_file))
    der = _run("openssl", "req", "-new", "-key", str(key_file), "-subj", "/", "-outform", "DER")
    csr_file.write_bytes(base64.encodebytes(der))
    answer = await _curl(
        "--cacert",
        str(https.ca_file),
        "-u",
        f"{claim['id']}:{claim['secret']}",
        "-H",
        "Content-Type: application/pkcs10",
        "--data-binary",
        f"@{csr_file}",
        f"https://localhost:{https.port}/.well-known/est/simpleenroll",
    )
    printed = _run(
        "openssl", "pkcs7", "-inform", "DER", "-print_certs", stdin=base64.b64decode(answer)
    )
    cert_file = tmp_path / "own.crt"
    cert_file.write_bytes(printed)
    cert = x509.load_pem_x509_certificate(printed[printed.index(b"-----BEGIN") :])
    device_id = cert.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)[0].value
    assert f"subject=O = {broker.org_id}, CN = {device_id}".encode() in printed
    assert (cert.not_valid_after_utc - cert.not_valid_before_utc).days == 20
    public = _run("openssl", "x509", "-in", str(cert_file), "-noout", "-pubkey")
    assert public == _run("openssl", "pkey", "-in", str(key_file), "-pubout")  # its own key
    files = (broker.ca_file, cert_file, key_file)
    assert (await broker.client("est", "mqtt-tls", tls=files).connect())[0] == 0
    status, body, _ = await https.call(
        "GET", f"/v2/devices/{device_id}", https.context(files=(cert_file, key_file))
    )
    assert (status, body["device"]["id"]) == (200, device_id)
    status, shown = await broker.call("GET", f"/v2/provisioning/claims/{claim['id']}")
    assert shown["claim"]["uses"] == 1


async def test_est_enroll_with_cryptography(broker: Harness, https: Https) -> None:
    """The same enrollment as REST (audited, the claim's template given), the certificate
    for the device's own key."""
    claim = await _claim(broker, template={"tags": ["est"]})
    key = csrs.ec_key()
    status, body, seen = await https.call(
        "POST",
        "/.well-known/est/simpleenroll",
        https.context(),
        data=base64.b64encode(csrs.der(csrs.request(key, None))),
        headers=_basic(claim["id"], claim["secret"]),
    )
    assert status == 200, body
    assert seen["Content-Type"] == "application/pkcs7-mime; smime-type=certs-only"
    (issued,) = pkcs7.load_der_pkcs7_certificates(base64.b64decode(body))
    assert issued.public_key() == key.public_key()
    issued.verify_directly_issued_by(broker.site.services.site_ca.cert)
    device_id = issued.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)[0].value
    status, shown = await broker.call("GET", f"/v2/devices/{device_id}")
    assert (status, shown["device"]["tags"]) == (200, ["est"]), shown
    status, events = await broker.call(
        "GET", f"/v2/audit?action=device_enrolled&target_id={device_id}"
    )
    assert [e["details"]["claim_id"] for e in events["audit_events"]] == [claim["id"]]


async def test_est_enroll_refusals(broker: Harness, https: Https) -> None:
    """A bad claim, or none, is REST's 401 asking for Basic (audited as REST's); a bad CSR
    is REST's 400 and spends no use."""
    claim = await _claim(broker)
    path, pkcs10 = "/.well-known/est/simpleenroll", {"Content-Type": "application/pkcs10"}
    good = base64.b64encode(csrs.der(csrs.request(csrs.ec_key(), None)))

    async def send(data: bytes, headers: dict[str, str]) -> tuple[int, Any, str]:
        status, body, seen = await https.call(
            "POST", path, https.context(), data=data, headers=headers
        )
        return status, body, seen.get("WWW-Authenticate", "")

    basic = 'Basic realm="edge EST", charset="UTF-8"'
    for headers in [
        pkcs10,
        _basic(claim["id"], "ecs_guess"),
        {**pkcs10, "Authorization": "Basic !!not-base64"},
        {**pkcs10, "Authorization": "Basic " + base64.b64encode(b"no-colon").decode()},
        {**pkcs10, "Authorization": f"Bearer {broker.admin_token}"},
    ]:
        assert await send(good, headers) == (401, {"message": CLAIM_REFUSED}, basic)
    status, events = await broker.call("GET", "/v2/audit?action=enrollment_failed")
    assert [e["details"]["reason"] for e in events["audit_events"]] == ["wrong_secret"]
    right = _basic(claim["id"], claim["secret"])
    exponent_3 = csrs.der(x509.load_pem_x509_csr(csrs.csr_pem(csrs.rsa_key(2048, 3)).encode()))
    status, body, _ = await send(base64.b64encode(exponent_3), right)
    assert (status, body) == (
        400,
        {"message": "csr: its RSA public exponent is 3; allowed: 65537 only"},
    )
    status, body, _ = await send(b"!!", right)
    assert (status, body) == (400, {"message": "csr: must be base64 of a DER request"})
    status, _, _ = await send(good, {**right, "Content-Type": "text/plain"})
    assert status == 400
    status, shown = await broker.call("GET", f"/v2/provisioning/claims/{claim['id']}")
    assert shown["claim"]["uses"] == 0


async def test_est_enroll_is_throttled_with_rest_enrollment(broker: Harness, https: Https) -> None:
    """Wrong secrets over REST and EST count together under the claim and the address:
    after five, the right secret over EST waits too (a 429 with Retry-After)."""
    clock.freeze()
    claim = await _claim(broker)
    good = base64.b64encode(csrs.der(csrs.request(csrs.ec_key(), None)))
    wrong = {"claim_id": claim["id"], "secret": "ecs_guess", "csr": "x"}
    for _ in range(3):
        status, _ = await broker.app_api.call("POST", "/v2/provisioning/enroll", json=wrong)
        assert status == 401
    for _ in range(2):
        status, _, _ = await https.call(
            "POST",
            "/.well-known/est/simpleenroll",
            https.context(),
            data=good,
            headers=_basic(claim["id"], "ecs_guess"),
        )
        assert status == 401
    status, body, seen = await https.call(
        "POST",
        "/.well-known/est/simpleenroll",
        https.context(),
        data=good,
        headers=_basic(claim["id"], claim["secret"]),
    )
    assert (status, body["message"]) == (429, BLOCKED) and int(seen["Retry-After"]) > 0


async def test_est_is_not_served_over_plain_http(broker: Harness) -> None:
    status, body = await broker.app_api.call("GET", "/.well-known/est/cacerts")
    assert (status, body) == (404, {"message": "EST is served on the HTTPS listener only"})
    for path in ("/.well-known/est/simplereenroll", "/.well-known/est/simpleenroll"):
        status, body = await broker.app_api.call(
            "POST", path, data=b"x", headers={"Content-Type": "application/pkcs10"}
        )
        assert status == 404, path


async def test_the_bundle_an_admin_fetches_connects(broker: Harness, tmp_path: Path) -> None:
    device = await broker.device("dev1")
    response = await broker.app_api.client.get(
        f"/v2/devices/{device.id}/bundle", headers={"Authorization": f"Bearer {broker.admin_token}"}
    )
    assert response.status == 200
    zipfile.ZipFile(io.BytesIO(await response.read())).extractall(tmp_path)
    folder = tmp_path / f"{device.id}-bundle"
    files = (folder / "ca.pem", folder / "device.crt", folder / "device.key")
    assert (await broker.client("b", "mqtt-tls", tls=files).connect())[0] == 0
    assert (await broker.client("o", "mqtt-tls", tls=broker.tls(device)).connect())[0] == 5
