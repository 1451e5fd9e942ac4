"""Device certificates over their life, over HTTP (docs/provisioning.md): who may list and
revoke a device's certificates and fetch its bundle (role-by-role tables, denials beside
grants), a device renewing its own from a CSR with its API key (each rule of a CSR), the
CRL, and a device deleted and restored from the trash with no certificate in force. The
client certificate on HTTPS, EST and the listeners are tests/embedded_broker/
test_certificate_life.py's."""

from __future__ import annotations

import asyncio
import io
import zipfile
from datetime import timedelta
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from edge.accounts.device_certificates import DeviceCertificates
from edge.certificates import issuing
from edge.kernel import clock
from edge.ops import check
from tests import csrs
from tests.api.test_metrics import scrape, value
from tests.ports import free_port
from tests.world import World, table

# Renewals follow resets at once here; the limit between them has a test of its own.
pytestmark = pytest.mark.world(
    mqtt_tls_port=lambda request: free_port(), device_certificate_renewal_seconds=0
)

NOT_FOUND = "Device not found"
ONLY_ADMINS = "Only admins of the device may manage its certificates"
# device_member's certificates and bundle: its admins only (as for iot_scopes,
# tests/api/test_devices.py), 403 for those who see it and are not, 404 for the rest.
ADMINS_OF_MEMBER = {
    "staff": 200,
    "staff_unscoped": 403,
    "org_admin": 200,
    "project_admin": 200,  # admins of its home project
    "role_admin": 200,
    "org_user_perms": 404,
    "org_group_role_perms": 404,
    "org_project_perms": 404,
    "org_device_perms": 403,  # may update it, not as an admin
    "project_user_perms": 404,
    "project_group_role_perms": 404,
    "project_device_perms": 403,
    "project_reader": 404,
    "project_updater": 404,
    "group_admin": 200,  # admins of a group it belongs to
    "group_user_perms": 404,
    "group_editor": 404,
    "group_device_perms": 403,
    "member": 404,
    "holder": 404,
    "owner": 403,  # reads it, no more
    "plain": 404,
    "gemini_user": 404,
    "device_member": 403,  # itself: it renews, it does not manage
    "device_loner": 404,
    "device_boss": 200,  # an org admin
    "device_plain": 404,
    "other_admin": 404,
    "anonymous": 401,
}


async def _issue(world: World, name: str = "device_member") -> dict[str, Any]:
    """New MQTT credentials for the device (an org admin's reset)."""
    path = f"/v2/devices/{world.id(name)}/reset-mqtt-credentials"
    status, body = await world.call("org_admin", "POST", path)
    assert status == 200, body
    return dict(body)


def _serial(pem: str) -> str:
    return format(x509.load_pem_x509_certificate(pem.encode()).serial_number, "x")


async def _certificates(world: World, name: str = "device_member") -> list[dict[str, Any]]:
    path = f"/v2/provisioning/devices/{world.id(name)}/certificates"
    status, body = await world.call("org_admin", "GET", path)
    assert status == 200, body
    return list(body["certificates"])


@pytest.mark.parametrize(("who", "expected"), table(ADMINS_OF_MEMBER))
async def test_who_fetches_a_bundle(world: World, who: str, expected: int) -> None:
    before = await _issue(world)
    token = await world.token(who)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    assert world.api is not None
    response = await world.api.client.get(
        f"/v2/devices/{world.id('device_member')}/bundle", headers=headers
    )
    assert response.status == expected, await response.text()
    listed = await _certificates(world)
    if expected != 200:
        assert [c["serial"] for c in listed if c["status"] == "active"] == [
            _serial(before["certificate"])
        ]
        return
    assert response.content_type == "application/zip"
    assert response.headers["Cache-Control"] == "no-store"
    files = zipfile.ZipFile(io.BytesIO(await response.read()))
    folder = f"{world.id('device_member')}-bundle"
    names = {"device.crt", "device.key", "ca.pem", "device.json", "README.txt", "paho_example.py"}
    assert set(files.namelist()) == {f"{folder}/{n}" for n in names}
    key_entry = files.getinfo(f"{folder}/device.key")
    assert key_entry.external_attr >> 16 == 0o600
    issued = files.read(f"{folder}/device.crt").decode()
    by_serial = {c["serial"]: c for c in listed}
    assert by_serial[_serial(issued)]["status"] == "active"
    assert by_serial[_serial(before["certificate"])]["status"] == "superseded"


async def test_a_head_of_the_bundle_is_a_405_and_issues_nothing(world: World) -> None:
    """A HEAD would issue new credentials and throw them away (superseding the device's)."""
    before = _serial((await _issue(world))["certificate"])
    token = await world.token("org_admin")
    assert world.api is not None
    response = await world.api.client.head(
        f"/v2/devices/{world.id('device_member')}/bundle",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status == 405 and response.headers["Allow"] == "GET"
    listed = await _certificates(world)
    assert [c["serial"] for c in listed if c["status"] == "active"] == [before]


@pytest.mark.parametrize(("who", "expected"), table(ADMINS_OF_MEMBER))
async def test_who_lists_and_revokes_a_certificate(world: World, who: str, expected: int) -> None:
    serial = _serial((await _issue(world))["certificate"])
    base = f"/v2/provisioning/devices/{world.id('device_member')}/certificates"
    status, body = await world.call(who, "GET", base)
    assert status == expected, body
    status, body = await world.call(
        who, "POST", f"{base}/{serial}/revoke", json={"reason": "key_compromise"}
    )
    assert status == expected, body
    (current,) = [c for c in await _certificates(world) if c["serial"] == serial]
    if expected == 200:
        assert body["certificate"] == current
        assert (current["status"], current["reason"]) == ("revoked", "key_compromise")
    else:
        assert current["status"] == "active"


async def test_a_revocation_is_once_and_of_the_devices_own(world: World) -> None:
    serial = _serial((await _issue(world))["certificate"])
    other = _serial((await _issue(world, "device_loner"))["certificate"])
    base = f"/v2/provisioning/devices/{world.id('device_member')}/certificates"
    status, body = await world.call("org_admin", "POST", f"{base}/{other}/revoke")
    assert (status, body) == (404, {"message": "Certificate not found"})
    status, body = await world.call("org_admin", "POST", f"{base}/{serial}/revoke")
    assert status == 200 and body["certificate"]["reason"] == "unspecified"
    status, body = await world.call("org_admin", "POST", f"{base}/{serial}/revoke")
    assert (status, body) == (409, {"message": "the certificate is already revoked"})
    status, body = await world.call(
        "org_admin", "POST", f"{base}/{serial}/revoke", json={"reason": "because"}
    )
    assert status == 400, body


async def test_a_reset_supersedes_the_certificate_before(world: World) -> None:
    first = _serial((await _issue(world))["certificate"])
    second = _serial((await _issue(world))["certificate"])
    listed = await _certificates(world)
    assert [(c["serial"], c["status"]) for c in listed][:2] == [
        (second, "active"),
        (first, "superseded"),
    ]
    assert listed[1]["reason"] == "superseded" and listed[1]["revoked_date"] is not None
    assert len(listed[0]["fingerprint"]) == 64 and listed[0]["not_before"] < listed[0]["not_after"]


async def test_a_device_renews_its_own_certificate_with_its_api_key(world: World) -> None:
    old = _serial((await _issue(world))["certificate"])
    key = csrs.ec_key()
    body = {"csr": csrs.pem(csrs.request(key, world.id("device_member")))}
    status, reply = await world.call("device_member", "POST", "/v2/provisioning/renew", json=body)
    assert status == 201, reply
    renewed = x509.load_pem_x509_certificate(reply["certificate"]["certificate"].encode())
    assert renewed.public_key() == key.public_key()  # the device's own key, never sent
    subject = renewed.subject.rfc4514_string()
    assert subject == f"CN={world.id('device_member')},O={world.tenant.org_id}"
    assert reply["certificate"]["ca_certificate"] == world.site.services.site_ca.pem.decode()
    by_serial = {c["serial"]: c["status"] for c in await _certificates(world)}
    assert by_serial == {**by_serial, old: "superseded", reply["certificate"]["serial"]: "active"}
    days = (renewed.not_valid_after_utc - renewed.not_valid_before_utc).days
    assert days == world.site.services.config.device_certificate_days


def _bad_requests(device_id: str) -> dict[str, tuple[str, str]]:
    good = csrs.request(csrs.ec_key(), device_id)
    one = "csr: must be one PEM certificate signing request (PKCS#10)"
    return {
        "not a request": ("hello", one),
        "two requests": (csrs.pem(good) + csrs.pem(csrs.request(csrs.ec_key(), device_id)), one),
        "trailing junk": (csrs.pem(good) + "junk\n", one),
        "bad signature": (
            csrs.bad_signature(good),
            "csr: its signature does not match its key (bad signature)",
        ),
        "small RSA key": (
            csrs.pem(csrs.request(rsa.generate_private_key(65537, 1024), device_id)),
            f"csr: its key is RSA of 1024 bits; allowed: {issuing.ALLOWED}",
        ),
        "curve P-521": (
            csrs.pem(csrs.request(ec.generate_private_key(ec.SECP521R1()), device_id)),
            f"csr: its key is EC on secp521r1; allowed: {issuing.ALLOWED}",
        ),
        "another device": (
            csrs.pem(csrs.request(csrs.ec_key(), "someone-else")),
            "csr: its subject names another device (leave the subject empty)",
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "not a request",
        "two requests",
        "trailing junk",
        "bad signature",
        "small RSA key",
        "curve P-521",
        "another device",
    ],
)
async def test_each_bad_csr_is_a_400_naming_the_rule(world: World, case: str) -> None:
    before = await _certificates(world)
    text, message = _bad_requests(world.id("device_member"))[case]
    status, body = await world.call(
        "device_member", "POST", "/v2/provisioning/renew", json={"csr": text}
    )
    assert (status, body) == (400, {"message": message})
    assert await _certificates(world) == before


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: csrs.csr_pem(csrs.rsa_key(2048, exponent=3)),
            "csr: its RSA public exponent is 3; allowed: 65537 only",
        ),
        (
            lambda: csrs.undecodable_subject(csrs.ec_key(), 0x0C, b"\xff" * 11),
            "csr: its subject cannot be decoded (leave it empty)",
        ),
    ],
    ids=["rsa-exponent-3", "undecodable-subject"],
)
async def test_renewal_meets_the_hardened_rules_of_enrollment(
    world: World, make: Any, message: str
) -> None:
    """One set of CSR rules (edge/certificates/issuing.py): renewal refuses what enrollment
    refuses, and a subject that cannot be read is a 400, never a 500."""
    before = await _certificates(world)
    status, body = await world.call(
        "device_member", "POST", "/v2/provisioning/renew", json={"csr": make()}
    )
    assert (status, body) == (400, {"message": message})
    assert await _certificates(world) == before


async def test_a_request_without_a_subject_is_taken(world: World) -> None:
    body = {"csr": csrs.pem(csrs.request(csrs.ec_key(), None))}
    status, reply = await world.call("device_loner", "POST", "/v2/provisioning/renew", json=body)
    assert status == 201, reply


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        ("org_admin", (403, "Only a device renews its own certificate")),
        ("plain", (403, "Only a device renews its own certificate")),
        ("anonymous", (401, "Authentication required: send 'Authorization: Bearer <token>'")),
    ],
)
async def test_only_a_device_renews(world: World, who: str, expected: tuple[int, str]) -> None:
    body = {"csr": csrs.pem(csrs.request(csrs.ec_key(), None))}
    status, reply = await world.call(who, "POST", "/v2/provisioning/renew", json=body)
    assert (status, reply) == (expected[0], {"message": expected[1]})


async def test_the_crl_lists_ended_certificates_with_their_reasons(world: World) -> None:
    superseded = _serial((await _issue(world))["certificate"])
    revoked = _serial((await _issue(world))["certificate"])
    active = _serial((await _issue(world, "device_loner"))["certificate"])
    base = f"/v2/provisioning/devices/{world.id('device_member')}/certificates"
    body = {"reason": "key_compromise"}
    assert (await world.call("org_admin", "POST", f"{base}/{revoked}/revoke", json=body))[0] == 200
    assert world.api is not None
    response = await world.api.client.get("/v2/provisioning/crl")  # public
    assert response.status == 200 and response.content_type == "application/pkix-crl"
    crl = x509.load_der_x509_crl(await response.read())
    assert crl.is_signature_valid(world.site.services.site_ca.cert.public_key())  # type: ignore[arg-type]
    reasons = {
        format(entry.serial_number, "x"): entry.extensions.get_extension_for_class(
            x509.CRLReason
        ).value.reason
        for entry in crl
    }
    assert reasons[superseded] == x509.ReasonFlags.superseded
    assert reasons[revoked] == x509.ReasonFlags.key_compromise
    assert active not in reasons


async def test_a_superseded_certificate_may_be_revoked_again_as_compromised(
    world: World,
) -> None:
    """Its key stolen after a renewal superseded it: key_compromise (and only that) revokes
    it again, once, and the CRL says so; an expired one is past the CRL, a 409."""
    superseded = _serial((await _issue(world))["certificate"])
    expired = _serial((await _issue(world, "device_loner"))["certificate"])
    await _issue(world)
    await _issue(world, "device_loner")
    base = f"/v2/provisioning/devices/{world.id('device_member')}/certificates/{superseded}"
    compromised = {"reason": "key_compromise"}
    status, body = await world.call("org_admin", "POST", f"{base}/revoke")
    assert (status, body) == (409, {"message": "the certificate is already superseded"})
    status, body = await world.call("org_admin", "POST", f"{base}/revoke", json=compromised)
    assert status == 200, body
    assert (body["certificate"]["status"], body["certificate"]["reason"]) == (
        "revoked",
        "key_compromise",
    )
    entry = (await _crl(world))[superseded]
    reason = entry.extensions.get_extension_for_class(x509.CRLReason).value.reason
    assert reason == x509.ReasonFlags.key_compromise
    status, body = await world.call("org_admin", "POST", f"{base}/revoke", json=compromised)
    assert (status, body) == (409, {"message": "the certificate is already revoked"})
    loner = f"/v2/provisioning/devices/{world.id('device_loner')}/certificates/{expired}"
    clock.advance(timedelta(days=366))
    status, body = await world.call("org_admin", "POST", f"{loner}/revoke", json=compromised)
    assert (status, body) == (409, {"message": "the certificate is already superseded"})


async def test_the_crl_number_increases_with_every_signing(world: World) -> None:
    """RFC 5280 5.2.3: each CRL's number is more than the last one's, also when it is
    signed again with nothing changed (hourly) and when the auth epoch went back (a
    restored backup): the number is the time of signing, not the epoch."""
    assert world.api is not None

    async def number() -> int:
        assert world.api is not None
        der = await (await world.api.client.get("/v2/provisioning/crl")).read()
        crl = x509.load_der_x509_crl(der)
        return crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number

    first = await number()
    assert await number() == first  # the same CRL until something changes
    clock.advance(timedelta(hours=2))
    resigned = await number()
    assert resigned > first
    restarted = DeviceCertificates(
        world.site.services.db,
        world.site.services.devices,
        world.site.services.site_ca,
        world.site.services.config,
    )
    again = x509.load_der_x509_crl(restarted.crl())
    assert again.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number > first


async def test_a_device_back_from_the_trash_has_no_certificate_in_force(world: World) -> None:
    serial = _serial((await _issue(world))["certificate"])
    device_id = world.id("device_member")
    assert (await world.call("org_admin", "DELETE", f"/v2/devices/{device_id}"))[0] == 200
    assert (await world.call("org_admin", "POST", f"/v2/trash/{device_id}/restore"))[0] == 200
    assert world.device("device_member").api_key_hash is None
    listed = await _certificates(world)
    assert all(c["status"] != "active" for c in listed)
    (ended,) = [c for c in listed if c["serial"] == serial]
    assert (ended["status"], ended["reason"]) == ("revoked", "cessation_of_operation")


async def _crl(world: World) -> dict[str, x509.RevokedCertificate]:
    """The CRL's entries by serial, checked signed by the site CA."""
    assert world.api is not None
    crl = x509.load_der_x509_crl(await (await world.api.client.get("/v2/provisioning/crl")).read())
    assert crl.is_signature_valid(world.site.services.site_ca.cert.public_key())  # type: ignore[arg-type]
    return {format(entry.serial_number, "x"): entry for entry in crl}


async def test_a_deleted_devices_certificates_stay_on_the_crl_until_they_expire(
    world: World,
) -> None:
    """Deleted (its rows in the trash), restored (listed once, none in force), deleted
    again and erased: its certificates are on the CRL throughout, until they expire."""
    superseded = _serial((await _issue(world))["certificate"])
    held = (await _issue(world))["certificate"]
    last = _serial(held)
    device_id = world.id("device_member")
    assert (await world.call("org_admin", "DELETE", f"/v2/devices/{device_id}"))[0] == 200
    listed = await _crl(world)
    assert {superseded, last} <= set(listed)
    reason = listed[last].extensions.get_extension_for_class(x509.CRLReason).value.reason
    assert reason == x509.ReasonFlags.cessation_of_operation
    assert (await world.call("org_admin", "POST", f"/v2/trash/{device_id}/restore"))[0] == 200
    assert all(c["status"] != "active" for c in await _certificates(world))
    assert {superseded, last} <= set(await _crl(world))  # each once (a dict would hide it)
    assert world.api is not None
    crl = x509.load_der_x509_crl(await (await world.api.client.get("/v2/provisioning/crl")).read())
    assert len([e for e in crl if format(e.serial_number, "x") == last]) == 1
    assert (await world.call("org_admin", "DELETE", f"/v2/devices/{device_id}"))[0] == 200
    assert (await world.call("org_admin", "DELETE", f"/v2/trash/{device_id}"))[0] == 200
    assert {superseded, last} <= set(await _crl(world))
    expiry = x509.load_pem_x509_certificate(held.encode()).not_valid_after_utc
    clock.advance(expiry - clock.now() + timedelta(seconds=1))
    assert not {superseded, last} & set(await _crl(world))


@pytest.mark.world(device_certificate_days=20)
async def test_certificates_ending_within_30_days_are_reported(world: World) -> None:
    """`/metrics` and `edge check` count certificates in force ending soon; a superseded
    one no longer counts, and the CA's own end is reported beside them."""
    assert world.api is not None
    staff = await world.token("staff_unscoped")
    before = value(await scrape(world.api, staff), "edge_device_certificates_expiring")
    await _issue(world)
    await _issue(world)  # supersedes the first
    await _issue(world, "device_loner")
    after = await scrape(world.api, staff)
    assert value(after, "edge_device_certificates_expiring") == before + 2
    ca_left = value(after, "edge_site_ca_expiry_seconds")
    assert 9 * 365 * 86400 < ca_left <= 3650 * 86400
    lines: list[str] = []
    check.run(world.site.services.config.data_dir, echo=lines.append)
    (found,) = [line for line in lines if " certificates " in f" {line} "]
    assert found.startswith("warn") and f"{int(before) + 2} device certificates end" in found
    assert world.id("device_member") in found and world.id("device_loner") in found
    assert any(line.startswith("ok    site-ca") for line in lines)


async def test_a_client_that_asks_for_octet_stream_gets_it(world: World) -> None:
    """A client generated from the OpenAPI document knows no CRL or zip type."""
    assert world.api is not None
    accept = {"Accept": "application/octet-stream"}
    response = await world.api.client.get("/v2/provisioning/crl", headers=accept)
    assert response.status == 200 and response.content_type == "application/octet-stream"
    x509.load_der_x509_crl(await response.read())
    headers = {**accept, "Authorization": f"Bearer {await world.token('org_admin')}"}
    path = f"/v2/devices/{world.id('device_member')}/bundle"
    response = await world.api.client.get(path, headers=headers)
    assert response.status == 200 and response.content_type == "application/octet-stream"


@pytest.mark.world(mqtt_tls_port=0)
async def test_no_bundle_while_mqtt_over_tls_is_off(world: World) -> None:
    """Told to those who may have the bundle; others learn nothing of the device."""
    path = f"/v2/devices/{world.id('device_member')}/bundle"
    status, body = await world.call("org_admin", "GET", path)
    message = "mqtt_tls_port is 0: MQTT over TLS is off, so no bundle"
    assert (status, body) == (409, {"message": message})
    assert (await world.call("other_admin", "GET", path))[0] == 404
    assert (await world.call("plain", "GET", path))[0] == 404


@pytest.mark.world(device_certificate_renewal_seconds=60)
async def test_a_device_renews_at_most_once_a_minute(world: World) -> None:
    """Each renewal is a registry row and a CRL entry: a device renewing in a loop would
    grow both without bound."""
    await _issue(world)
    body = {"csr": csrs.pem(csrs.request(csrs.ec_key(), None))}
    renew = ("device_member", "POST", "/v2/provisioning/renew")
    status, reply = await world.call(*renew, json=body)
    assert status == 429, reply
    assert reply["message"].startswith("This device's certificate was issued less than 60")
    clock.advance(timedelta(seconds=61))
    assert (await world.call(*renew, json=body))[0] == 201
    assert (await world.call(*renew, json=body))[0] == 429  # counted from the renewal


@pytest.mark.world(device_certificate_renewal_seconds=60)
async def test_renewals_sent_together_get_one_certificate(world: World) -> None:
    """The limit is read in the write that records the certificate: concurrent renewals
    cannot all pass it before any is recorded."""
    await _issue(world)
    clock.advance(timedelta(seconds=61))
    bodies = [{"csr": csrs.pem(csrs.request(csrs.ec_key(), None))} for _ in range(4)]
    answers = await asyncio.gather(
        *(world.call("device_member", "POST", "/v2/provisioning/renew", json=b) for b in bodies)
    )
    assert sorted(status for status, _ in answers) == [201, 429, 429, 429]
    assert [c["status"] for c in await _certificates(world)] == ["active", "superseded"]
