"""Provisioning claims: made, listed, read and revoked by admins (docs/provisioning.md).

Who may (as for e-mail templates, the other resource of an org and its projects that only
admins manage):

- org admins (staff in the org's scope too): every claim of the org, org-level (the device
  enrolls with no project) and of any project;
- project admins (directly or through a role): the claims of their projects;
- everyone else, group admins and devices that are no org or project admin included:
  nothing (403 when they are an admin somewhere in the org but not of this claim's project,
  else 404 for one claim and 403 for the list).

The secret is shown once, in the answer to the create, with a QR code of it; only its
SHA-256 is kept (a 256-bit random secret cannot be guessed from it, as for API keys).
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from edge.access.engine import Caller, Permissions
from edge.devices import credentials
from edge.kernel import audit, clock, fields, ids
from edge.kernel.errors import Denied, NotFound, ValidationError
from edge.kernel.listing import CursorCodec, ListQuery, Page, fetch
from edge.kernel.principal import Principal
from edge.provisioning import qr, template
from edge.tenancy.settings import check_project, require_org
from storage import claims as store
from storage.database import Database
from storage.records import AuditEvent, Claim

TABLE = store.LIST
SECRET_PREFIX = "ecs_"
SECRET_BYTES = 32
DEFAULT_LIFETIME = timedelta(days=7)
MAX_LIFETIME = timedelta(days=366)
MAX_USES = 100_000
MISSING = "Provisioning claim not found"
Row = dict[str, Any]


# Kept and compared as API keys are (edge/devices/credentials.py): SHA-256, constant time.
secret_hash = credentials.key_hash
secret_matches = credentials.matches


def state(claim: Claim, now_iso: str) -> str:
    """`revoked`, `used_up`, `expired` or `active`: whether a device may enroll with it."""
    if claim.revoked_date is not None:
        return "revoked"
    if claim.uses >= claim.max_uses:
        return "used_up"
    if claim.expires_date <= now_iso:
        return "expired"
    return "active"


class Claims:
    def __init__(
        self, db: Database, cursors: CursorCodec, permissions: Permissions, enroll_url: str
    ) -> None:
        self._db = db
        self.cursors = cursors
        self._permissions = permissions
        self._enroll_url = enroll_url

    async def create(self, principal: Principal, body: dict[str, Any]) -> Row:
        """A new claim, with its secret and the QR code of it: shown this once."""
        org_id = require_org(principal)
        project_id = check_project(self._db, org_id, _project_of(principal, body))
        grants = self._permissions.caller(principal)
        _require_admin(grants, project_id)
        secret = SECRET_PREFIX + secrets.token_urlsafe(SECRET_BYTES)
        claim = Claim(
            id=ids.new_id(),
            org_id=org_id,
            project_id=project_id,
            name=fields.text("name", body.get("name")),
            secret_hash=secret_hash(secret),
            template=template.checked(self._db, grants, org_id, project_id, body.get("template")),
            max_uses=fields.integer("max_uses", body.get("max_uses", 1), 1, MAX_USES),
            uses=0,
            expires_date=_expiry(body.get("expires_date")),
            last_used_date=None,
            revoked_date=None,
            revoked_by=None,
            created_date=clock.now_iso(),
            created_by=principal.actor,
        )
        made = _event("claim_created", principal, claim, template.summary(claim.template))
        await self._db.write(audit.along(lambda c: store.create(c, claim), made))
        shown = qr.contents(self._enroll_url, claim.id, secret)
        return {**present(claim), "secret": secret, "qr_code": qr.data_url(shown)}

    def get(self, principal: Principal, claim_id: str) -> Row:
        return present(self._load(principal, claim_id))

    async def list(self, principal: Principal, query: ListQuery) -> Page:
        org_id = require_org(principal)
        held = self._permissions.caller(principal)
        projects = None if held.is_org_admin else held.admin_projects()
        if projects is not None and not projects:
            raise Denied("Only org and project admins may list provisioning claims")
        scope = store.visible(org_id, principal.project_id, projects)
        page = await fetch(self._db, TABLE, query, *scope)
        page.rows = [present(row) for row in page.rows]
        return page

    async def revoke(self, principal: Principal, claim_id: str) -> None:
        """No device enrolls with it from now on; those it enrolled keep their credentials.
        Revoking a revoked claim changes nothing and is no error."""
        claim = self._load(principal, claim_id)
        now = clock.now_iso()
        revoked = _event("claim_revoked", principal, claim)
        write = audit.along(lambda c: store.revoke(c, claim.id, now, principal.actor), revoked)
        if claim.revoked_date is None:
            await self._db.write(write)

    def _load(self, principal: Principal, claim_id: str) -> Claim:
        org_id = require_org(principal)
        claim = self._db.read(lambda c: store.get(c, claim_id))
        if claim is None or claim.org_id != org_id:
            raise NotFound(MISSING)
        if principal.project_id and claim.project_id != principal.project_id:
            raise NotFound(MISSING)
        held = self._permissions.caller(principal)
        if not held.is_project_admin(claim.project_id):
            if held.is_admin_anywhere():
                raise Denied("Only admins of the claim's org or project may manage it")
            raise NotFound(MISSING)
        return claim


def _project_of(principal: Principal, body: dict[str, Any]) -> Any:
    """The claim's project as given, else the session's; in a project session it must be
    the session's project (as for devices made there): no org-level claim either."""
    if principal.project_id is None:
        return body.get("project_id")
    if body.get("project_id", principal.project_id) != principal.project_id:
        raise ValidationError("project_id", "must be the project of this session")
    return principal.project_id


def _require_admin(held: Caller, project_id: str | None) -> None:
    if project_id is None and not held.is_org_admin:
        raise Denied("Only org admins may make org-level provisioning claims")
    if not held.is_project_admin(project_id):
        raise Denied("Only org admins and the project's admins may make its provisioning claims")


def _expiry(given: Any) -> str:
    """When the claim expires: a time in the next year (default: in a week)."""
    now = clock.now()
    if given is None:
        return clock.iso(now + DEFAULT_LIFETIME)
    try:
        moment = clock.parse(given) if isinstance(given, str) else None
    except ValueError:
        moment = None
    if moment is None:
        raise ValidationError("expires_date", "must be an ISO 8601 date and time")
    if not now < moment <= now + MAX_LIFETIME:
        raise ValidationError("expires_date", "must be in the future, at most a year from now")
    return clock.iso(moment)


def _event(action: str, principal: Principal, claim: Claim, given: Row | None = None) -> AuditEvent:
    """A claim's event; `given`: what its devices get (template.summary), on its creation."""
    details: Row = {"name": claim.name, "project_id": claim.project_id}
    if given is not None:
        details["template"] = given
    return audit.event(
        action, principal, org_id=claim.org_id, target=("claim", claim.id), details=details
    )


def present(claim: Claim) -> Row:
    """A claim as admins read it (ProvisioningClaim); never its secret or hash."""
    out: Row = {
        "id": claim.id,
        "name": claim.name,
        "template": claim.template,
        "max_uses": claim.max_uses,
        "uses": claim.uses,
        "expires_date": claim.expires_date,
        "state": state(claim, clock.now_iso()),
        "created_date": claim.created_date,
    }
    for name in ("project_id", "created_by", "last_used_date", "revoked_date", "revoked_by"):
        value = getattr(claim, name)
        if value is not None:
            out[name] = value
    return out
