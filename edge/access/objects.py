"""Access objects of every target kind (group, project, role), through one flow.

Get, create, patch and delete run the same steps for each kind; a kind (edge/access/
kinds.py) supplies only what differs: how its target is opened and who manages its
access, which grantees it takes, rank rules, value rules, checks inside the write, and
whose sessions end after a change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from edge.access import values as rules
from edge.access.engine import Caller, Permissions
from edge.kernel import audit
from edge.kernel.errors import Conflict, DeleteProtected, Denied, NotFound
from edge.kernel.principal import Principal
from storage import access as store
from storage.database import Database
from storage.records import Access, AuditEvent
from storage.rows import Tx


class AccessExists(Conflict):
    def __init__(self) -> None:
        super().__init__("This access already exists")


@dataclass
class Target:
    """One opened target: what the caller may do with its access objects."""

    id: str
    org_id: str
    project_id: str | None
    readable: bool  # may read any access object of the target
    manages: bool  # may create, change and delete them (and sees admin-only fields)
    refuse: Callable[[str], None]  # raises the 403 or 404 fitting a refused action
    extra: dict[str, Any] = field(default_factory=dict)  # fields every answer carries


# (caller, grantee kind, grantee ID) -> whether the caller may read that user, device or
# role (its GET is not a 404).
Reads = Callable[[Caller, str, str], bool]


class Kind(Protocol):
    name: str  # 'group', 'project' or 'role'
    missing: str  # the 404 message of an access object that does not exist
    unknown_grantee: str  # the 404 message of a grantee that does not exist (or is unseen)

    def open(self, caller: Caller, target_id: str) -> Target: ...

    def grantee_kind(self, target: Target, grantee_id: str) -> str: ...

    def check_rank(self, caller: Caller, target: Target, grantee_id: str) -> None: ...

    def values(self, target: Target, body: Mapping[str, Any]) -> dict[str, Any]: ...

    def own(self, caller: Caller, grantee_id: str) -> bool: ...

    def check_write(self, conn: Tx, target: Target, grantee_id: str) -> None: ...

    async def after(self, target: Target, before: Access, after: Access | None) -> None: ...


class AccessObjects:
    """Access objects of every kind. `reads` answers whether a caller may read a grantee:
    access is given, or turned on, only to accounts and roles the caller can see, since
    access to what the caller manages makes the caller the grantee's admin (a group admin
    of its members); an account it cannot see is a 404, as if it did not exist."""

    def __init__(
        self, db: Database, permissions: Permissions, kinds: Mapping[str, Kind], reads: Reads
    ):
        self._db = db
        self._permissions = permissions
        self._kinds = dict(kinds)
        self._reads = reads

    def get(self, principal: Principal, kind: str, target_id: str, grantee_id: str) -> Any:
        spec, caller = self._kinds[kind], self._caller(principal)
        target = spec.open(caller, target_id)
        if not (target.manages or target.readable or spec.own(caller, grantee_id)):
            target.refuse("read")
        found = self._find(spec, target, grantee_id)
        return {**rules.present(found, admin=target.manages), **target.extra}

    async def create(
        self, principal: Principal, kind: str, target_id: str, grantee_id: str, body: Any
    ) -> None:
        spec, caller = self._kinds[kind], self._caller(principal)
        target = self._managed(spec, caller, target_id)
        grantee_kind = spec.grantee_kind(target, grantee_id)
        self._require_seen(spec, caller, grantee_kind, grantee_id)
        spec.check_rank(caller, target, grantee_id)
        values = spec.values(target, body)
        row = rules.new_access(
            spec.name,
            target.id,
            grantee_id,
            grantee_kind,
            target.org_id,
            principal.actor,
            values,
        )

        def write(conn: Tx) -> None:
            if store.get(conn, target.id, grantee_id) is not None:
                raise AccessExists()
            spec.check_write(conn, target, grantee_id)
            store.create(conn, row)

        granted = _event("access_granted", principal, spec.name, target, row, body)
        await self._db.write(audit.along(write, granted))

    async def patch(
        self, principal: Principal, kind: str, target_id: str, grantee_id: str, body: Any
    ) -> None:
        spec, caller = self._kinds[kind], self._caller(principal)
        target = self._managed(spec, caller, target_id)
        current = self._find(spec, target, grantee_id)
        spec.check_rank(caller, target, grantee_id)
        changes = rules.changes_of(spec.name, current, spec.values(target, body), principal.actor)
        if current.replace(**changes).is_active:  # in force after the patch
            self._require_seen(spec, caller, current.grantee_kind, grantee_id)

        def write(conn: Tx) -> None:
            if not store.patch(conn, current.id, changes):
                raise NotFound("Access not found")

        updated = _event("access_updated", principal, spec.name, target, current, body)
        await self._db.write(audit.along(write, updated))
        await spec.after(target, current, current.replace(**changes))

    async def delete(
        self, principal: Principal, kind: str, target_id: str, grantee_id: str, *, force: bool
    ) -> None:
        spec, caller = self._kinds[kind], self._caller(principal)
        target = self._managed(spec, caller, target_id)
        current = self._find(spec, target, grantee_id)
        spec.check_rank(caller, target, grantee_id)
        if current.is_delete_protected and not force:
            raise DeleteProtected("Access")

        def write(conn: Tx) -> None:
            if not store.delete(conn, current.id):
                raise NotFound("Access not found")

        revoked = _event("access_revoked", principal, spec.name, target, current, {"force": force})
        await self._db.write(audit.along(write, revoked))
        await spec.after(target, current, None)

    def _caller(self, principal: Principal) -> Caller:
        if principal.org_id is None:
            raise Denied("Sign in to an organization first (staff: with a scope)")
        return self._permissions.caller(principal)

    def _require_seen(self, spec: Kind, caller: Caller, grantee_kind: str, grantee_id: str) -> None:
        """No setting widens this: a grantee the caller cannot read is as unknown as one
        that does not exist (docs/permissions.md, "Who may give access to whom")."""
        if not self._reads(caller, grantee_kind, grantee_id):
            raise NotFound(spec.unknown_grantee)

    @staticmethod
    def _managed(spec: Kind, caller: Caller, target_id: str) -> Target:
        target = spec.open(caller, target_id)
        if not target.manages:
            target.refuse("manage")
        return target

    def _find(self, spec: Kind, target: Target, grantee_id: str) -> Access:
        found = self._db.read(lambda c: store.get(c, target.id, grantee_id))
        if found is None or found.kind != spec.name:
            raise NotFound(spec.missing)
        return found


def _event(
    action: str, principal: Principal, kind: str, target: Any, access: Access, body: Any
) -> AuditEvent:
    """An access object given, changed or taken: on what, to whom, which fields were sent
    (and whether it makes an admin)."""
    details: dict[str, Any] = {
        "kind": kind,
        "on": target.id,
        "grantee_id": access.grantee_id,
        "grantee_kind": access.grantee_kind,
    }
    if isinstance(body, dict):
        details["fields"] = sorted(body)
        if "is_admin" in body:
            details["is_admin"] = bool(body["is_admin"])
    org_id = target.org_id
    return audit.event(
        action, principal, org_id=org_id, target=("access", access.id), details=details
    )
