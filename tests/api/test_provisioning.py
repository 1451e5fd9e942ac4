"""Provisioning over HTTP (docs/provisioning.md): who may make, read, list and revoke claims
(denials next to grants), and enrollment with a claim and a CSR: a claim used, used up,
expired, revoked and replayed, every bad CSR, the certificate the site CA signs for the
device's own key, the throttle, the audit log, and claims across a backup and restore."""

from __future__ import annotations

import asyncio
import base64
import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from PIL import Image

from edge.app import open_site
from edge.kernel import clock
from edge.kernel.errors import Unauthenticated, ValidationError
from edge.ops import backup
from storage.rows import many, scalar
from tests import csrs
from tests.conftest import make_config
from tests.world import (
    ADMIN_CREATORS,
    ADMIN_CREATORS_IN_APOLLO,
    APOLLO_ADMIN_RESOURCE,
    World,
    table,
)

CLAIMS = "/v2/provisioning/claims"
ENROLL = "/v2/provisioning/enroll"
REFUSED = "Invalid provisioning claim or secret"
BLOCKED = "Too many failed enrollment attempts; try again later"
SCOPES = {"/telemetry": {"can_publish": True, "can_subscribe": False}}


async def make_claim(world: World, who: str = "org_admin", **body: Any) -> dict[str, Any]:
    status, reply = await world.call(who, "POST", CLAIMS, json={"name": "Line 4", **body})
    assert status == 201, reply
    return dict(reply["claim"])


async def apollo_claim(world: World, **body: Any) -> dict[str, Any]:
    """A claim of Apollo whose devices join Lab (in Apollo) and Ward (org-level)."""
    template = {
        "groups": {world.project_group_id: {"can_read": True}, world.org_group_id: {}},
        "tags": ["line-4", "pump"],
        "iot_scopes": SCOPES,
    }
    return await make_claim(world, project_id=world.project_id, template=template, **body)


async def enroll(
    world: World, claim: dict[str, Any], pem: str | None = None, **extra: Any
) -> tuple[int, Any]:
    body = {"claim_id": claim["id"], "secret": claim["secret"], **extra}
    body["csr"] = pem if pem is not None else csrs.csr_pem(csrs.ec_key())
    assert world.api is not None
    return await world.api.call("POST", ENROLL, json=body)


def device_count(world: World) -> int:
    return int(world.site.services.db.read(lambda c: scalar(c, "SELECT count(*) FROM devices")))


# -- who may ------------------------------------------------------------------------------
@pytest.mark.parametrize(("who", "expected"), table(ADMIN_CREATORS))
async def test_create_org_level_claim_by_role(world: World, who: str, expected: int) -> None:
    status, reply = await world.call(who, "POST", CLAIMS, json={"name": "Line 4"})
    assert status == expected, reply


@pytest.mark.parametrize(("who", "expected"), table(ADMIN_CREATORS_IN_APOLLO))
async def test_create_apollo_claim_by_role(world: World, who: str, expected: int) -> None:
    body = {"name": "Line 4", "project_id": world.project_id}
    status, reply = await world.call(who, "POST", CLAIMS, json=body)
    assert status == expected, reply


@pytest.mark.parametrize(("who", "expected"), table(APOLLO_ADMIN_RESOURCE))
async def test_get_and_revoke_apollo_claim_by_role(world: World, who: str, expected: int) -> None:
    claim = await make_claim(world, project_id=world.project_id)
    status, reply = await world.call(who, "GET", f"{CLAIMS}/{claim['id']}")
    assert status == expected, reply
    status, reply = await world.call(who, "DELETE", f"{CLAIMS}/{claim['id']}")
    assert status == expected, reply
    _, after = await world.call("org_admin", "GET", f"{CLAIMS}/{claim['id']}")
    assert after["claim"]["state"] == ("revoked" if expected == 200 else "active")


CLAIM_LISTERS = {
    **dict.fromkeys(ADMIN_CREATORS, 403),
    "staff": 200,
    "org_admin": 200,
    "project_admin": 200,
    "role_admin": 200,
    "device_boss": 200,
    "other_admin": 200,  # Other's claims: none
    "anonymous": 401,
}


@pytest.mark.parametrize(("who", "expected"), table(CLAIM_LISTERS))
async def test_list_claims_by_role(world: World, who: str, expected: int) -> None:
    apollo = await make_claim(world, project_id=world.project_id)
    org_level = await make_claim(world)
    status, reply = await world.call(who, "GET", CLAIMS)
    assert status == expected, reply
    if status != 200:
        return
    listed = {c["id"] for c in reply["claims"]}
    if who == "other_admin":
        assert listed == set()
    elif who in ("project_admin", "role_admin"):
        assert listed == {apollo["id"]}
    else:
        assert listed == {apollo["id"], org_level["id"]}
    assert not any("secret" in c or "secret_hash" in c for c in reply["claims"])


async def test_a_project_admin_cannot_touch_org_level_claims(world: World) -> None:
    claim = await make_claim(world)
    for method in ("GET", "DELETE"):
        status, reply = await world.call("project_admin", method, f"{CLAIMS}/{claim['id']}")
        assert status == 403, reply


async def test_a_template_gives_only_groups_its_maker_administers(world: World) -> None:
    """A project admin of Apollo is no admin of Ward (org-level): that is a 403; a group of
    another project is a 400 (the home-project rule), as is an unknown one."""
    body = {"name": "x", "project_id": world.project_id}
    ward = {"template": {"groups": {world.org_group_id: {}}}}
    status, reply = await world.call("project_admin", "POST", CLAIMS, json={**body, **ward})
    assert status == 403, reply
    lab = {"template": {"groups": {world.project_group_id: {}}}}
    status, reply = await world.call("project_admin", "POST", CLAIMS, json={**body, **lab})
    assert status == 201, reply
    gemini_group = await world.new_group(world.second_project_id)
    other = {"template": {"groups": {gemini_group: {}}}}
    status, reply = await world.call("org_admin", "POST", CLAIMS, json={**body, **other})
    assert (status, reply["message"].split(":")[0]) == (400, f"template.groups.{gemini_group}")
    unknown = {"template": {"groups": {"nosuchgroup00001": {}}}}
    status, reply = await world.call("org_admin", "POST", CLAIMS, json={**body, **unknown})
    assert status == 400, reply


@pytest.mark.parametrize(
    ("body", "expected", "field"),
    [
        ({"max_uses": 0}, 400, "max_uses"),
        ({"expires_date": "2001-01-01T00:00:00Z"}, 400, "expires_date"),
        ({"expires_date": "next tuesday"}, 400, "expires_date"),
        (
            {"template": {"iot_scopes": {"/a/#/b": {"can_publish": True}}}},
            400,
            "template.iot_scopes",
        ),
        ({"template": {"groups": {"nosuchgroup00001": {}}}}, 400, "template.groups"),
        ({"template": {"tags": "not-a-list"}}, 406, "template"),
        ({"template": {"owner": "me"}}, 406, "template"),
    ],
)
async def test_bad_claims_are_refused_naming_the_field(
    world: World, body: dict[str, Any], expected: int, field: str
) -> None:
    status, reply = await world.call("org_admin", "POST", CLAIMS, json={"name": "x", **body})
    assert (status, reply["message"].startswith(field)) == (expected, True), reply


# -- the claim as made -----------------------------------------------------------------------
async def test_the_secret_is_shown_once_with_its_qr_code_and_kept_only_hashed(
    world: World,
) -> None:
    claim = await apollo_claim(world, max_uses=3)
    assert claim["secret"].startswith("ecs_") and claim["state"] == "active"
    assert claim["qr_code"].startswith("data:image/png;base64,")
    png = base64.b64decode(claim["qr_code"].removeprefix("data:image/png;base64,"))
    assert Image.open(io.BytesIO(png)).format == "PNG"
    _, shown = await world.call("org_admin", "GET", f"{CLAIMS}/{claim['id']}")
    assert "secret" not in shown["claim"] and "qr_code" not in shown["claim"]
    assert shown["claim"]["template"]["tags"] == ["line-4", "pump"]
    stored = world.site.services.db.read(lambda c: many(c, "SELECT * FROM provisioning_claims"))
    assert claim["secret"] not in repr(stored)
    assert stored[0]["secret_hash"] != claim["secret"]


# -- enrollment --------------------------------------------------------------------------------
async def test_a_device_enrolls_and_its_certificate_is_for_its_own_key(world: World) -> None:
    claim = await apollo_claim(world, max_uses=2)
    key = csrs.ec_key(ec.SECP384R1())
    status, device = await enroll(world, claim, csrs.csr_pem(key), name="Pump 7")
    assert status == 201, device
    assert "private_key" not in device
    cert = x509.load_pem_x509_certificate(device["certificate"].encode())
    cert.verify_directly_issued_by(world.site.services.site_ca.cert)
    assert cert.public_key() == key.public_key()
    assert (
        cert.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)[0].value == (device["id"])
    )
    assert device["project_id"] == world.project_id and device["name"] == "Pump 7"
    assert set(device["groups"]) == {world.project_group_id, world.org_group_id}
    status, seen = await world.api.call("GET", f"/v2/devices/{device['id']}", device["api_key"])
    assert status == 200, seen
    assert seen["device"]["tags"] == ["line-4", "pump"]
    assert seen["device"]["iot_scopes"] == SCOPES
    _, after = await world.call("org_admin", "GET", f"{CLAIMS}/{claim['id']}")
    assert (after["claim"]["uses"], after["claim"]["state"]) == (1, "active")


async def test_the_broker_takes_the_enrolled_certificate(world: World) -> None:
    """The registry holds the new serial, so the device's certificate authenticates it."""
    claim = await apollo_claim(world)
    status, device = await enroll(world, claim)
    assert status == 201, device
    cert = x509.load_pem_x509_certificate(device["certificate"].encode())
    der = cert.public_bytes(csrs.serialization.Encoding.DER)
    found = world.site.services.device_directory.by_certificate(der)
    assert found is not None and found.account_id == device["id"]


@pytest.mark.parametrize(
    "key_args",
    [("ec", "-pkeyopt", "ec_paramgen_curve:P-256"), ("rsa:2048",)],
    ids=["openssl-ec", "openssl-rsa"],
)
async def test_an_openssl_request_enrolls(
    world: World, tmp_path: Path, key_args: tuple[str]
) -> None:
    claim = await make_claim(world)
    pem, key_file = csrs.openssl_csr(tmp_path, *key_args)
    status, device = await enroll(world, claim, pem)
    assert status == 201, device
    cert = x509.load_pem_x509_certificate(device["certificate"].encode())
    key = csrs.serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    assert cert.public_key() == key.public_key()
    assert device["name"] == device["id"]  # no common name asked for: named by its ID


async def test_a_claim_used_up_then_replayed_is_refused(world: World) -> None:
    claim = await make_claim(world, max_uses=1)
    pem = csrs.csr_pem(csrs.ec_key())
    assert (await enroll(world, claim, pem))[0] == 201
    before = device_count(world)
    status, reply = await enroll(world, claim, pem)  # the same request again
    assert (status, reply["message"]) == (401, REFUSED)
    assert device_count(world) == before
    _, after = await world.call("org_admin", "GET", f"{CLAIMS}/{claim['id']}")
    assert (after["claim"]["uses"], after["claim"]["state"]) == (1, "used_up")


async def test_an_expired_claim_is_refused(world: World) -> None:
    soon = clock.iso(clock.now() + timedelta(hours=1))
    claim = await make_claim(world, expires_date=soon)
    clock.advance(timedelta(hours=2))
    status, reply = await enroll(world, claim)
    assert (status, reply["message"]) == (401, REFUSED)
    _, after = await world.call("org_admin", "GET", f"{CLAIMS}/{claim['id']}")
    assert after["claim"]["state"] == "expired"


async def test_a_revoked_claim_is_refused(world: World) -> None:
    claim = await make_claim(world, max_uses=5)
    assert (await enroll(world, claim))[0] == 201
    status, _ = await world.call("org_admin", "DELETE", f"{CLAIMS}/{claim['id']}")
    assert status == 200
    status, reply = await enroll(world, claim)
    assert (status, reply["message"]) == (401, REFUSED)


async def test_a_wrong_secret_or_unknown_claim_gets_the_same_answer(world: World) -> None:
    claim = await make_claim(world)
    wrong = {**claim, "secret": claim["secret"][:-2] + "xx"}
    assert await enroll(world, wrong) == (401, {"message": REFUSED})
    unknown = {**claim, "id": "nosuchclaim00001"}
    assert await enroll(world, unknown) == (401, {"message": REFUSED})
    assert (await enroll(world, claim))[0] == 201


@pytest.mark.parametrize(
    ("make", "rule"),
    [
        (lambda: csrs.csr_pem(csrs.rsa_key(1024)), "its key is RSA of 1024 bits"),
        (lambda: csrs.csr_pem(csrs.ec_key(ec.SECP521R1())), "its key is EC on secp521r1"),
        (lambda: csrs.csr_pem(csrs.ed25519_key()), "its key is of type"),
        (
            lambda: csrs.tampered(
                csrs.csr_pem(csrs.ec_key(), "tamper-me-a"), "tamper-me-a", "tamper-me-b"
            ),
            "bad signature",
        ),
        (lambda: "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n", "is not a readable"),
        (lambda: "a certificate, honest", "must be one PEM"),
    ],
    ids=["rsa-1024", "ec-p521", "ed25519", "bad-signature", "garbage", "not-pem"],
)
async def test_each_bad_csr_is_a_400_naming_the_rule(world: World, make: Any, rule: str) -> None:
    claim = await make_claim(world)
    status, reply = await enroll(world, claim, make())
    assert status == 400 and reply["message"].startswith("csr: ") and rule in reply["message"]
    _, after = await world.call("org_admin", "GET", f"{CLAIMS}/{claim['id']}")
    assert after["claim"]["uses"] == 0  # a bad CSR spends no use


@pytest.mark.parametrize("names", ["id", "name"])
async def test_a_subject_naming_another_device_is_refused(world: World, names: str) -> None:
    claim = await make_claim(world)
    other = world.devices["device_member"] if names == "id" else world.device("device_member").name
    status, reply = await enroll(world, claim, csrs.csr_pem(csrs.ec_key(), other))
    assert status == 400 and "names another device" in reply["message"], reply


async def test_a_refused_write_spends_no_use(world: World) -> None:
    """A name taken by another device is a 409 found inside the enrollment's transaction:
    nothing of it stays, the use included."""
    claim = await make_claim(world)
    taken = world.device("device_member").name
    status, reply = await enroll(world, claim, name=taken)
    assert status == 409, reply
    _, after = await world.call("org_admin", "GET", f"{CLAIMS}/{claim['id']}")
    assert after["claim"]["uses"] == 0
    assert (await enroll(world, claim, name="Fresh name"))[0] == 201


async def test_failures_are_throttled_like_sign_ins(world: World) -> None:
    clock.freeze()  # the back-off is a second long: it must not run out while the test runs
    claim = await make_claim(world)
    wrong = {**claim, "secret": "ecs_wrong"}
    for _ in range(5):
        assert (await enroll(world, wrong))[0] == 401
    status, reply = await enroll(world, claim)  # even the right secret waits now
    assert status == 429, reply


async def test_enrollments_and_refusals_are_audited(world: World) -> None:
    claim = await make_claim(world)
    await enroll(world, {**claim, "secret": "ecs_wrong"})
    _, device = await enroll(world, claim)
    sql = "SELECT action, actor_kind, actor_id, actor_name, target_id, details FROM audit_events"
    rows = world.site.services.db.read(lambda c: many(c, sql + " ORDER BY created_date"))
    by_action = {r["action"]: r for r in rows}
    failed, enrolled = by_action["enrollment_failed"], by_action["device_enrolled"]
    assert '"reason": "wrong_secret"' in failed["details"].replace('":"', '": "')
    assert (enrolled["actor_kind"], enrolled["target_id"]) == ("anonymous", device["id"])
    assert f'"claim_id": "{claim["id"]}"' in enrolled["details"].replace('":"', '": "')
    assert failed["target_id"] == claim["id"]
    assert by_action["claim_created"]["target_id"] == claim["id"]
    assert claim["secret"] not in repr(rows)


async def test_claims_survive_a_backup_and_restore(world: World, tmp_path: Path) -> None:
    claim = await make_claim(world, max_uses=2)
    data_dir = world.site.services.config.data_dir
    backup.backup(data_dir, tmp_path / "copy", lambda _: None)
    backup.restore(tmp_path / "copy", tmp_path / "restored", force=False, echo=lambda _: None)
    again = open_site(make_config(tmp_path / "restored"))
    try:
        body = {"claim_id": claim["id"], "secret": claim["secret"]}
        body["csr"] = csrs.csr_pem(csrs.ec_key())
        device = await again.services.enrollment.enroll(body, None)
        cert = x509.load_pem_x509_certificate(device["certificate"].encode())
        cert.verify_directly_issued_by(world.site.services.site_ca.cert)  # the same CA
        assert device["claim_id"] == claim["id"]
        names = cert.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)
        assert [name.value for name in names] == [device["id"]]
    finally:
        again.services.db.close()


async def test_two_devices_racing_for_the_last_use_cannot_both_win(world: World) -> None:
    """Both find the claim usable before either writes; the use is spent (and checked
    again) inside the enrollment's transaction, so one of them is refused there."""
    claim = await make_claim(world, max_uses=1)
    before = device_count(world)
    answers = await asyncio.gather(enroll(world, claim), enroll(world, claim))
    assert sorted(status for status, _ in answers) == [201, 401]
    assert device_count(world) == before + 1


async def test_the_routes_are_tagged_as_extensions(world: World) -> None:
    status, document = await world.call("anonymous", "GET", "/v2/openapi.json")
    assert status == 200
    operations = {
        (method.upper(), path): operation
        for path, methods in document["paths"].items()
        if path.startswith("/v2/provisioning/")
        for method, operation in methods.items()
    }
    claims = "/v2/provisioning/claims"
    assert {
        ("POST", claims),
        ("GET", claims),
        ("GET", claims + "/{claim_id}"),
        ("DELETE", claims + "/{claim_id}"),
        ("POST", "/v2/provisioning/enroll"),
    } <= set(operations)
    assert all(op["tags"] == ["provisioning", "extensions"] for op in operations.values())


# -- hardening: what an attack on claims and enrollment found ----------------------------------
def audit_details(world: World, action: str) -> list[dict[str, Any]]:
    sql = "SELECT details FROM audit_events WHERE action = ? ORDER BY created_date"
    rows = world.site.services.db.read(lambda c: many(c, sql, (action,)))
    return [json.loads(row["details"]) for row in rows]


def throttle_keys(world: World) -> list[str]:
    rows = world.site.services.db.read(lambda c: many(c, "SELECT key FROM sign_in_failures"))
    return [row["key"] for row in rows]


async def test_a_claim_id_not_shaped_like_an_id_is_refused_and_kept_nowhere(
    world: World,
) -> None:
    """Anyone may send one: it is the same 401, counted under the address alone, and the
    audit log keeps only its start (a 100 kB ID once grew the database by 500 kB a call)."""
    huge = "c" * 100_000
    body = {"claim_id": huge, "secret": "ecs_x", "csr": "x"}
    assert await world.api.call("POST", ENROLL, json=body) == (401, {"message": REFUSED})
    assert throttle_keys(world) == ["addr:127.0.0.1"]
    (failed,) = audit_details(world, "enrollment_failed")
    assert failed["reason"] == "malformed_claim_id" and len(failed["claim_id"]) < 100
    with pytest.raises(Unauthenticated):  # no address (a call from within): no key, audited
        await world.site.services.enrollment.enroll(body, None)
    assert throttle_keys(world) == ["addr:127.0.0.1"]
    assert len(audit_details(world, "enrollment_failed")) == 2


@pytest.mark.parametrize(
    ("field", "value"),
    [("secret", "ecs_" + "s" * 253), ("csr", csrs.csr_pem(csrs.ec_key()) + " " * 16_384)],
    ids=["secret", "padded-csr"],
)
async def test_an_oversized_secret_or_csr_is_a_400(world: World, field: str, value: str) -> None:
    claim = await make_claim(world)
    body = {"claim_id": claim["id"], "secret": claim["secret"], "csr": csrs.csr_pem(csrs.ec_key())}
    status, reply = await world.api.call("POST", ENROLL, json={**body, field: value})
    assert status == 400 and reply["message"].startswith(f"{field}: must be at most"), reply
    assert device_count(world) == len(world.devices)


@pytest.mark.parametrize(
    ("tag", "raw"),
    [(0x0C, b"\xff" * 11), (0x16, b"\xff" * 11), (0x02, b"\x01" * 11)],
    ids=["utf8-invalid", "ia5-high-byte", "integer"],
)
async def test_a_subject_that_cannot_be_decoded_is_a_400(
    world: World, tag: int, raw: bytes
) -> None:
    claim = await make_claim(world)
    status, reply = await enroll(world, claim, csrs.undecodable_subject(csrs.ec_key(), tag, raw))
    assert status == 400 and "its subject cannot be decoded" in reply["message"], reply
    _, after = await world.call("org_admin", "GET", f"{CLAIMS}/{claim['id']}")
    assert after["claim"]["uses"] == 0


async def test_an_rsa_key_with_another_exponent_is_a_400(world: World) -> None:
    claim = await make_claim(world)
    status, reply = await enroll(world, claim, csrs.csr_pem(csrs.rsa_key(2048, exponent=3)))
    assert (status, reply["message"]) == (
        400,
        "csr: its RSA public exponent is 3; allowed: 65537 only",
    )


async def test_knowing_a_claims_id_locks_no_one_out_of_it(world: World) -> None:
    """Wrong secrets from many addresses block each address, never the claim: the device
    with the secret enrolls from its own address."""
    clock.freeze()
    claim = await make_claim(world)
    enrollment = world.site.services.enrollment
    wrong = {"claim_id": claim["id"], "secret": "ecs_guess", "csr": "x"}
    for address in range(20):
        for _ in range(5):
            with pytest.raises(Unauthenticated):
                await enrollment.enroll(wrong, f"203.0.113.{address}")
    assert not any(key.startswith("acct:") for key in throttle_keys(world))
    right = {"claim_id": claim["id"], "secret": claim["secret"], "csr": csrs.csr_pem(csrs.ec_key())}
    device = await enrollment.enroll(right, "198.51.100.7")
    assert device["claim_id"] == claim["id"]


async def test_probing_with_a_good_claim_spends_throttle_budget(world: World) -> None:
    """A subject naming a device (400) and a taken name (409) spend no use, but each counts
    as a failure of the claim from this address: probing device names soon waits."""
    clock.freeze()
    claim = await make_claim(world)
    named = csrs.csr_pem(csrs.ec_key(), world.device("device_member").name)
    for _ in range(3):
        assert (await enroll(world, claim, named))[0] == 400
    for _ in range(2):
        assert (await enroll(world, claim, name=world.device("device_loner").name))[0] == 409
    status, reply = await enroll(world, claim, name="Fresh name")
    assert (status, reply["message"]) == (429, BLOCKED), reply
    reasons = [event["reason"] for event in audit_details(world, "enrollment_failed")]
    assert sorted(reasons) == ["bad_csr"] * 3 + ["name_taken"] * 2


async def test_the_csr_subject_never_names_the_device(world: World) -> None:
    claim = await make_claim(world, max_uses=2)
    status, device = await enroll(world, claim, csrs.csr_pem(csrs.ec_key(), "Pump 9"))
    assert (status, device["name"]) == (201, device["id"]), device
    cert = x509.load_pem_x509_certificate(device["certificate"].encode())
    cn = cert.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)[0].value
    assert cn == device["id"]


async def test_a_suspended_org_is_a_401_before_any_csr_rule(world: World) -> None:
    """The claim, its org and project are checked before the CSR: a bad CSR tells a caller
    nothing about whether the claim would work."""
    claim = await make_claim(world)
    org = f"/v2/orgs/{world.tenant.org_id}"
    status, reply = await world.call("staff_unscoped", "PATCH", org, json={"is_active": False})
    assert status == 200, reply
    bad = "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n"
    assert await enroll(world, claim, bad) == (401, {"message": REFUSED})
    assert await enroll(world, claim) == (401, {"message": REFUSED})
    reasons = [event["reason"] for event in audit_details(world, "enrollment_failed")]
    assert reasons == ["org_suspended", "org_suspended"]


MAKER_LOSSES = {
    "deleted": ("DELETE", "/v2/users/{maker}", None),
    "suspended": ("PATCH", "/v2/users/{maker}", {"is_active": False}),
    "demoted": ("PATCH", "/v2/projects/{project}/access/{maker}", {"is_admin": False}),
}


@pytest.mark.parametrize("loss", sorted(MAKER_LOSSES))
async def test_a_claim_dies_with_its_makers_rights(world: World, loss: str) -> None:
    """A project admin's claim makes group admins of Lab; once the maker is deleted,
    suspended or no longer a project admin, the claim enrolls no one."""
    template = {"groups": {world.project_group_id: {"is_admin": True}}}
    body = {"name": "x", "project_id": world.project_id, "max_uses": 5, "template": template}
    status, made = await world.call("project_admin", "POST", CLAIMS, json=body)
    assert status == 201, made
    claim = made["claim"]
    assert (await enroll(world, claim))[0] == 201  # while the maker holds the rights
    method, path, change = MAKER_LOSSES[loss]
    where = path.format(maker=world.id("project_admin"), project=world.project_id)
    status, reply = await world.call("org_admin", method, where, json=change)
    assert status == 200, reply
    assert await enroll(world, claim) == (401, {"message": REFUSED})
    (failed,) = audit_details(world, "enrollment_failed")
    assert failed["reason"] == "maker_lost_rights"


async def test_a_claim_of_a_group_its_maker_no_longer_administers_is_refused(
    world: World,
) -> None:
    """A project admin of Apollo who was made an admin of Ward (org-level) gives Ward in a
    claim of Apollo; once no longer Ward's admin, the claim enrolls no one."""
    maker = world.id("project_admin")
    await world.grant("group", world.org_group_id, maker, is_admin=True)
    template = {"groups": {world.org_group_id: {}}}
    body = {"name": "x", "project_id": world.project_id, "template": template}
    status, made = await world.call("project_admin", "POST", CLAIMS, json=body)
    assert status == 201, made
    where = f"/v2/groups/{world.org_group_id}/access/{maker}"
    status, reply = await world.call("org_admin", "PATCH", where, json={"is_admin": False})
    assert status == 200, reply
    assert await enroll(world, made["claim"]) == (401, {"message": REFUSED})


async def test_what_claims_give_is_audited(world: World) -> None:
    claim = await apollo_claim(world)
    status, device = await enroll(world, claim)
    assert status == 201, device
    (created,) = audit_details(world, "claim_created")
    groups = [
        {"id": world.project_group_id, "is_admin": False},
        {"id": world.org_group_id, "is_admin": False},
    ]
    assert created["template"] == {
        "groups": groups,
        "iot_scopes": SCOPES,
        "tags": ["line-4", "pump"],
    }
    (enrolled,) = audit_details(world, "device_enrolled")
    assert enrolled["groups"] == groups and enrolled["iot_scopes"] == SCOPES


@pytest.mark.parametrize("given", ["second", None])
async def test_a_project_session_makes_claims_of_its_project_only(
    world: World, given: str | None
) -> None:
    """As for devices made in a project session: another project, or none (an org-level
    claim), is a 400 on project_id; leaving it out makes a claim of the session's project."""
    token = await world.token("org_admin", world.project_id)
    project_id = world.second_project_id if given == "second" else None
    body = {"name": "x", "project_id": project_id}
    status, reply = await world.api.call("POST", CLAIMS, token, json=body)
    assert status == 400 and reply["message"].startswith("project_id: "), reply
    status, reply = await world.api.call("POST", CLAIMS, token, json={"name": "x"})
    assert (status, reply["claim"]["project_id"]) == (201, world.project_id)


async def test_a_projects_claims_come_back_with_it_from_the_trash(world: World) -> None:
    claim = await make_claim(world, project_id=world.project_id)
    project = f"/v2/projects/{world.project_id}"
    assert (await world.call("org_admin", "DELETE", f"{project}?force=true"))[0] == 200
    assert (await world.call("org_admin", "GET", f"{CLAIMS}/{claim['id']}"))[0] == 404
    restore = f"/v2/trash/{world.project_id}/restore"
    assert (await world.call("org_admin", "POST", restore))[0] == 200
    status, shown = await world.call("org_admin", "GET", f"{CLAIMS}/{claim['id']}")
    assert (status, shown["claim"]["state"]) == (200, "active"), shown
    assert (await enroll(world, claim))[0] == 201


@pytest.mark.parametrize(
    ("access", "expected", "field"),
    [
        ({"is_admn": True}, 406, "is_admn"),
        ({"can_read": "yes"}, 406, "can_read"),
        ({"data_paths": {"/a": {}, "/a/": {}}}, 400, "data_paths"),
    ],
    ids=["misspelled", "wrong-type", "bad-path"],
)
async def test_a_templates_group_access_follows_the_group_access_rules(
    world: World, access: dict[str, Any], expected: int, field: str
) -> None:
    """Refused as POST /v2/groups/{id}/access/{grantee} refuses the same body, under
    `template.groups.<group ID>.`; never dropped."""
    route = f"/v2/groups/{world.org_group_id}/access/{world.id('plain')}"
    assert (await world.call("org_admin", "POST", route, json=access))[0] == expected
    body = {"name": "x", "template": {"groups": {world.org_group_id: access}}}
    status, reply = await world.call("org_admin", "POST", CLAIMS, json=body)
    assert status == expected, reply
    assert reply["message"].startswith(f"template.groups.{world.org_group_id}.{field}"), reply


async def test_a_misspelled_group_access_field_is_refused_by_the_service_too(
    world: World,
) -> None:
    """Whoever calls the service (not only the HTTP route, whose schema refuses it first)."""
    access = {"is_admn": True}
    body = {"name": "x", "template": {"groups": {world.org_group_id: access}}}
    with pytest.raises(ValidationError) as refused:
        await world.site.services.claims.create(world.admin, body)
    assert refused.value.field == f"template.groups.{world.org_group_id}.is_admn"


async def test_answers_with_secrets_are_never_stored(world: World) -> None:
    """The claim's secret, the enrolled device's API key, a new device's key and the
    answers of the two resets of a device's credentials."""
    token = await world.token("org_admin")
    client = world.api.client
    bearer = {"Authorization": f"Bearer {token}"}
    made = await client.post(CLAIMS, json={"name": "x"}, headers=bearer)
    claim = (await made.json())["claim"]
    body = {"claim_id": claim["id"], "secret": claim["secret"], "csr": csrs.csr_pem(csrs.ec_key())}
    enrolled = await client.post(ENROLL, json=body)
    device = await client.post("/v2/devices", json={"name": "zz"}, headers=bearer)
    one = f"/v2/devices/{(await device.json())['device']['id']}"
    key = await client.post(f"{one}/reset-api-key", headers=bearer)
    credentials = await client.post(f"{one}/reset-mqtt-credentials", headers=bearer)
    for response in (made, enrolled, device, key, credentials):
        assert response.status in (200, 201), await response.text()
        assert response.headers["Cache-Control"] == "no-store"
