"""Enrollment (`POST /v2/provisioning/enroll`, docs/provisioning.md): a device presents a
claim's ID and secret with a certificate signing request and becomes a device of the
claim's organization, with the claim's template, an API key and a certificate the site CA
signs for the key it made itself. Its private key never leaves it.

- A claim that is unknown, revoked, used up or expired, a wrong secret, a suspended org or
  project, or a maker who no longer holds the rights the claim gives (edge/provisioning/
  maker.py): one 401 with one message, so a caller learns nothing of which (the audit log
  tells admins). A `claim_id` not shaped like an ID is that 401 too, before any lookup.
- Failures are counted like sign-ins (edge/auth/throttle.py) under the (claim, client
  address) pair and the address, never claim-wide: knowing a claim's ID must not let
  anyone lock every device out of it. A blocked pair or address gets a 429 of its own.
  A malformed `claim_id` counts under the address alone.
- The claim, its org and project are checked first, then the CSR (the rules of every CSR,
  edge/certificates/issuing.py, a 400 naming the rule; here a subject naming a device of
  the claim's org, by ID or name, is another device), so a bad CSR tells nothing about a
  claim. The CSR's subject is not used: the device is named by `name`, else its ID. A
  400 or 409 (a name taken) for a holder of a good claim spends no use but counts as a
  failure of the pair, so probing for device names costs throttle budget.
- Every failure is audited (`enrollment_failed` with its reason; the claim ID as sent is
  cut to MAX_AUDITED characters).
- The site CA signs the CSR's key as every device certificate (`SiteCa.sign_client`,
  lasting `device_certificate_days`). One transaction spends a use (re-checked there, so
  two devices racing for the last use cannot both win), creates the device, records its
  certificate as every issued one is (`device_kind.record_certificate`), gives it its
  groups and records the audit event (with the groups and scopes given).
- REST enrollment (`enroll`, a JSON body, answered with the device and its API key) and
  EST `simpleenroll` (api/est.py: HTTP Basic and a DER CSR, answered with the certificate
  alone) are one path, `enroll_device`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from cryptography.hazmat.primitives import serialization

from edge.access.engine import Permissions
from edge.accounts import device_kind, writes
from edge.auth.throttle import Keys, Throttle
from edge.certificates import issuing
from edge.certificates.ca import ClientKey, Issued, SiteCa
from edge.devices import credentials
from edge.devices.credentials import Endpoints
from edge.devices.topics import root_scope
from edge.kernel import audit, clock, fields, ids
from edge.kernel.errors import Conflict, Unauthenticated, ValidationError
from edge.kernel.printable import for_log
from edge.provisioning import maker, template
from edge.provisioning.claims import secret_hash, secret_matches, state
from storage import claims as store
from storage import devices as device_store
from storage import groups as group_store
from storage import orgs as org_store
from storage import projects as project_store
from storage.database import Database
from storage.records import AuditEvent, Claim, Device
from storage.rows import Tx

REFUSED = "Invalid provisioning claim or secret"
BLOCKED = "Too many failed enrollment attempts; try again later"
MAX_SECRET = 256
MAX_AUDITED = 64  # characters of a claim ID as sent that the audit log keeps
# Counted under the (claim, address) pair and the address: never claim-wide.
THROTTLED = Keys(message=BLOCKED, account_wide=False)
PAIR_ONLY = replace(THROTTLED, address=False)
ADDRESS_ONLY = replace(THROTTLED, pair=False)
ENROLL_PATH = "/v2/provisioning/enroll"
# Compared against when no claim has the ID, so that an unknown claim costs the same.
_NO_HASH = secret_hash("")
Row = dict[str, Any]


@dataclass(frozen=True)
class Application:
    """What a device presents: a claim's ID and secret, its CSR as sent (PEM text, or EST's
    bytes), and the name it asks for (None: its ID)."""

    claim_id: str
    secret: str
    csr: issuing.Sent
    name: Any = None


@dataclass(frozen=True)
class Enrolled:
    claim_id: str
    device: Device
    api_key: str
    public_key: ClientKey
    issued: Issued
    groups: list[str]


class Enrollment:
    def __init__(
        self,
        db: Database,
        throttle: Throttle,
        permissions: Permissions,
        site_ca: SiteCa,
        endpoints: Endpoints,
    ) -> None:
        self._db = db
        self._throttle = throttle
        self._permissions = permissions
        self._ca = site_ca
        self._endpoints = endpoints

    async def enroll(self, body: dict[str, Any], address: str | None) -> Row:
        """The new device and its credentials (EnrolledDevice), shown this once."""
        application = Application(
            str(body["claim_id"]), str(body["secret"]), str(body["csr"]), body.get("name")
        )
        return self._answer(await self.enroll_device(application, address))

    async def enroll_device(self, application: Application, address: str | None) -> Enrolled:
        """A new device of the claim's org, its certificate signed and recorded."""
        claim_id, secret = application.claim_id, application.secret
        _require_sizes(secret, application.csr)
        if not ids.looks_like_id(claim_id):
            await self._refuse_malformed(claim_id, address)
        throttled = f"claim:{claim_id}"
        self._throttle.check(throttled, address, THROTTLED)
        claim = self._db.read(lambda c: store.get(c, claim_id))
        refusal = self._refusal(claim, secret)
        if refusal is not None:
            failed = _failed(claim_id, claim, refusal)
            await self._throttle.failed(throttled, address, failed, THROTTLED)
            raise Unauthenticated(REFUSED)
        assert claim is not None
        try:
            key = issuing.checked(application.csr, lambda name: self._names_device(claim, name))
            enrolled = await self._create(claim, application.name, key)
        except (ValidationError, Conflict) as refused:
            failed = _failed(claim_id, claim, _reason(refused), str(refused))
            await self._throttle.failed(throttled, address, failed, PAIR_ONLY)
            raise
        await self._throttle.succeeded(throttled, address)
        return enrolled

    async def _refuse_malformed(self, claim_id: str, address: str | None) -> None:
        """A claim ID no claim can have: the 401, counted under the address alone (nothing
        of it is kept as a key, and the audit log keeps only its start)."""
        self._throttle.check("", address, ADDRESS_ONLY)
        failed = _failed(claim_id, None, "malformed_claim_id")
        await self._throttle.failed("", address, failed, ADDRESS_ONLY)
        raise Unauthenticated(REFUSED)

    def _refusal(self, claim: Claim | None, secret: str) -> str | None:
        """Why the claim may not be used (for the audit log alone), or None."""
        good = secret_matches(secret, claim.secret_hash if claim else _NO_HASH)
        if claim is None:
            return "unknown"
        if not good:
            return "wrong_secret"
        found = state(claim, clock.now_iso())
        if found != "active":
            return found
        return self._standing(claim)

    def _standing(self, claim: Claim) -> str | None:
        """Whether the claim's org and project are active and its maker still entitled."""
        org, project = self._db.read(lambda c: _homes(c, claim))
        if org is None or not org.is_active:
            return "org_suspended"
        if project is not None and not project.is_active:
            return "project_suspended"
        if not maker.still_entitled(self._db, self._permissions, claim):
            return "maker_lost_rights"
        return None

    def _names_device(self, claim: Claim, name: str) -> bool:
        """Whether a CSR's common name is the ID or the name of a device of the claim's
        organization (another organization's devices are not its business)."""

        def named(conn: Tx) -> bool:
            found = device_store.get(conn, name)
            if found is not None and found.org_id == claim.org_id:
                return True
            return device_store.name_taken(conn, claim.org_id, "", name.casefold())

        return self._db.read(named)

    async def _create(self, claim: Claim, name: Any, public_key: ClientKey) -> Enrolled:
        key, key_hash = credentials.new_api_key()
        device = self._device(claim, name, key_hash)
        issued = self._ca.sign_client(public_key, device.id, claim.org_id)
        enrolled = _enrolled_event(claim, device)

        def write(conn: Tx) -> list[str]:
            if not store.use(conn, claim.id, clock.now_iso()):
                raise Unauthenticated(REFUSED)
            device_kind.check_name(
                conn, claim.org_id, device.id, {"name_folded": device.name_folded}
            )
            device_store.create(conn, device)
            device_kind.record_certificate(conn, device.id, issued)
            given = _give_groups(conn, claim, device)
            audit.add(conn, _with_groups(enrolled, claim, given))
            return given

        groups = await self._db.write(write)
        return Enrolled(claim.id, device, key, public_key, issued, groups)

    def _device(self, claim: Claim, name: Any, key_hash: str) -> Device:
        """The new device's row: the claim's project, tags and scopes, and the defaults of
        its org and project (checked active by `_standing`). Its name is the one given,
        else its ID (never the CSR's subject)."""
        org, project = self._db.read(lambda c: _homes(c, claim))
        device_id = ids.new_id()
        chosen = name if name is not None else device_id
        values = {
            **writes.defaults(org, project, "device"),
            "id": device_id,
            "name": fields.text("name", chosen),
            "project_id": claim.project_id,
            "tags": claim.template.get("tags", []),
            "iot_scopes": claim.template.get("iot_scopes", {}),
            "api_key_hash": key_hash,
        }
        return device_kind.new_device(claim.org_id, claim.id, values)

    def _answer(self, enrolled: Enrolled) -> Row:
        device = enrolled.device
        public = enrolled.public_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        out: Row = {
            "id": device.id,
            "name": device.name,
            "claim_id": enrolled.claim_id,
            "api_key": enrolled.api_key,
            "certificate": enrolled.issued.certificate,
            "public_key": public.decode(),
            "root_ca": self._endpoints.root_ca,
            "broker": self._endpoints.broker,
            "root_scope": root_scope(device.org_id, device.project_id),
            "tags": device.tags,
            "iot_scopes": device.iot_scopes,
            "groups": enrolled.groups,
        }
        if device.project_id is not None:
            out["project_id"] = device.project_id
        return out


def _homes(conn: Tx, claim: Claim) -> tuple[Any, Any]:
    org = org_store.get(conn, claim.org_id)
    project = None
    if claim.project_id is not None:
        project = project_store.get_in_org(conn, claim.org_id, claim.project_id)
    return org, project


def _give_groups(conn: Tx, claim: Claim, device: Device) -> list[str]:
    """The template's group access, in the groups that still exist; their IDs."""
    given = []
    for group_id, values in claim.template.get("groups", {}).items():
        group = group_store.get(conn, group_id)
        if group is None or group.org_id != claim.org_id:
            continue
        change = writes.AccessChange("group", group_id, values)
        writes.write_access(conn, claim.org_id, device.id, "device", claim.id, change)
        given.append(group_id)
    return given


def _enrolled_event(claim: Claim, device: Device) -> AuditEvent:
    """No account acts (the device has none yet): the event names the claim it used, and
    the scopes and tags the device got (its groups are added once given)."""
    return audit.event(
        "device_enrolled",
        None,
        org_id=claim.org_id,
        target=("device", device.id),
        details={
            "claim_id": claim.id,
            "claim": claim.name,
            "name": device.name,
            "iot_scopes": device.iot_scopes,
            "tags": device.tags,
        },
    )


def _with_groups(event: AuditEvent, claim: Claim, given: list[str]) -> AuditEvent:
    """The event with the groups the device was given (those of the template that still
    exist), each with whether it made the device a group admin."""
    groups = template.summary(claim.template, given)["groups"]
    return replace(event, details={**event.details, "groups": groups})


def _require_sizes(secret: str, sent: issuing.Sent) -> None:
    """Bounds on what a caller who holds nothing may send (a 400 that tells nothing of a
    claim): the secret, and the CSR as sent."""
    if len(secret) > MAX_SECRET:
        raise ValidationError("secret", f"must be at most {MAX_SECRET} characters")
    issuing.require_size(sent)


def _reason(refused: ValidationError | Conflict) -> str:
    """How a refusal after the claim was verified is named in the audit log."""
    if isinstance(refused, Conflict):
        return "name_taken"
    return "bad_csr" if refused.field == issuing.FIELD else "bad_body"


def _failed(claim_id: str, claim: Claim | None, reason: str, rule: str | None = None) -> AuditEvent:
    """A refused enrollment, with why (which the caller is not told of a 401); its target
    is the claim when one has the ID. The claim ID as sent is kept only in part."""
    details = {"claim_id": for_log(claim_id, MAX_AUDITED), "reason": reason}
    if rule is not None:
        details["rule"] = for_log(rule, MAX_AUDITED * 4)
    return audit.event(
        "enrollment_failed",
        None,
        org_id=claim.org_id if claim else None,
        target=("claim", claim.id) if claim else None,
        details=details,
    )
