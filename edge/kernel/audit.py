"""The audit log: security-relevant actions, who did them, to what, from where
(docs/audit.md).

An event is built on the event loop (`event`), where the request's origin (client address
and request ID, set by the HTTP layer through `set_origin`) is known, and written inside
the action's own write (`along`, or `add` inside a write already running), so recording
it costs no transaction of its own. `Audit.record` writes events alone, for an action
that has no write to ride along with (none does today).

An event never holds a secret: `details` come from the code that records the event, never
from a request body, and keys that name a secret are dropped here as a last guard.

Names: an event keeps its actor's and target's names beside their IDs, read by the insert
that records it (storage/audit.py `add`: after the action, so a new account is found; a
deleted one by the name its event carries in `details`), so the log reads the same after a
rename or a deletion.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any, TypeVar

from edge.kernel import clock
from edge.kernel.errors import Denied
from edge.kernel.ids import new_id
from edge.kernel.listing import ListQuery, Page, fetch
from edge.kernel.origin import origin
from edge.kernel.principal import Principal
from storage import audit as store
from storage.database import Database
from storage.records import AUDIT_EVENTS, AuditEvent
from storage.rows import Tx

TABLE = store.LIST  # what api/audit.py lists by

T = TypeVar("T")
SECRET_WORDS = ("password", "token", "secret", "code", "key", "hash", "otp")
# What the actions are, by family; the list the docs and the tests name.
ACTIONS = {
    "sign-in": ("sign_in", "sign_in_failed", "sign_in_locked", "sign_in_blocks_cleared"),
    "mqtt": ("mqtt_auth_failed",),
    "mfa": ("mfa_enabled", "mfa_disabled"),
    "passwords": ("password_changed", "password_reset", "password_set_by_operator"),
    "orgs": ("org_created",),
    "users": ("user_created", "user_updated", "user_deleted", "user_restored"),
    "groups": ("group_created",),
    "roles": ("role_created", "role_updated", "role_deleted", "role_restored"),
    "access": ("access_granted", "access_updated", "access_revoked"),
    "devices": (
        "device_created",
        "device_updated",
        "device_api_key_reset",
        "device_certificate_reset",
        "device_certificate_renewed",
        "device_certificate_revoked",
        "device_deleted",
        "device_restored",
    ),
    "tunnels": ("tunnel_opened", "tunnel_closed", "tunnel_token_taken"),
    "twins": ("twin_desired_updated",),
    "commands": ("command_sent", "command_canceled"),
    "jobs": ("job_created", "job_canceled", "job_deleted"),
    "provisioning": (
        "claim_created",
        "claim_revoked",
        "device_enrolled",
        "enrollment_failed",
    ),
}
OPERATOR = "operator"  # the name of the command line's actor


def caller_or(fallback: Principal) -> Principal:
    """The running request's caller (an admin acting on a user), else `fallback` (the
    user acting on their own account, with a challenge session or a reset token)."""
    found = origin().principal
    return found if found is not None else fallback


def event(
    action: str,
    actor: Principal | None,
    *,
    org_id: str | None = None,
    target: tuple[str, str] | None = None,
    details: Mapping[str, Any] | None = None,
    actor_kind: str | None = None,
) -> AuditEvent:
    """An event of `actor` (None: an anonymous caller, or `actor_kind` 'operator' for
    the command line); its organization is the actor's unless named. The operator has
    no account, so its events name no actor ID, whichever way they are recorded."""
    where = origin()
    kind = actor_kind or (actor.kind if actor is not None else "anonymous")
    account = actor.account_id if actor is not None and kind != "operator" else None
    return AuditEvent(
        id=new_id(),
        created_date=clock.now_iso(),
        org_id=org_id if org_id is not None or actor is None else actor.org_id,
        action=action,
        actor_kind=kind,
        actor_id=account,
        target_kind=target[0] if target else None,
        target_id=target[1] if target else None,
        client=where.client,
        request_id=where.request_id,
        details=_clean(details or {}),
        actor_name=OPERATOR if kind == OPERATOR else None,  # no account names it
    )


def _clean(details: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in details.items() if not any(word in k.lower() for word in SECRET_WORDS)}


def along(write: Callable[[Tx], T], *events: AuditEvent) -> Callable[[Tx], T]:
    """`write`, with the events recorded in the same transaction (only if it succeeds)."""

    def both(conn: Tx) -> T:
        result = write(conn)
        add(conn, *events)
        return result

    return both


def add(conn: Tx, *events: AuditEvent) -> None:
    """Record events inside a write already running, with their names (storage/audit.py)."""
    for item in events:
        store.add(conn, item)


class Audit:
    """Reading the log (org admins and scoped staff: their organization's; staff without
    a scope: every event) and keeping it to its retention period."""

    def __init__(self, db: Database, is_org_admin: Callable[[Principal], bool], days: int):
        self._db = db
        self._is_org_admin = is_org_admin
        self.retention = timedelta(days=days)

    async def record(self, *events: AuditEvent) -> None:
        """Events with no write of their own to ride along with."""
        await self._db.write(lambda c: add(c, *events))

    async def list(self, principal: Principal, query: ListQuery) -> Page:
        """Staff without a scope read every event; staff acting in an organization (a scoped
        token) and its admins read that organization's."""
        if principal.is_staff and principal.org_id is None:
            return await fetch(self._db, TABLE, query)
        if principal.is_staff:
            return await fetch(self._db, TABLE, query, store.SCOPE, (principal.org_id,))
        if principal.kind != "user" or principal.org_id is None:
            raise Denied("Only org admins and staff may read the audit log")
        if not self._is_org_admin(principal):
            raise Denied("Only org admins and staff may read the audit log")
        return await fetch(self._db, TABLE, query, store.SCOPE, (principal.org_id,))

    def prune(self, conn: Tx) -> int:
        """Inside the hourly sweep's write: forget events past the retention period."""
        return store.prune_before(conn, clock.iso(clock.now() - self.retention))


def present(item: AuditEvent) -> dict[str, Any]:
    """An event as the API and the CLI show it (absent fields omitted)."""
    shown = {k: getattr(item, k) for k in AUDIT_EVENTS.columns}
    return {k: v for k, v in shown.items() if v is not None}
