"""Deleting, restoring and erasing users, devices, groups, roles and projects
(docs/lifecycle.md).

A delete without `permanent=true` moves the record, and every row that belongs to it, to
the trash in one transaction: it disappears from lookups, lists and permission checks,
its unique names are free, and the sessions it opened end. Admins may restore it for
`trash_retention_days`; after that a sweep erases it. `permanent=true` erases at once.
Callers check who may delete before they come here, and whether the caller is an admin of
the record; the guard every delete shares is here: a delete-protected record needs
`force`, and only its admins may force. Restoring and erasing from the trash are for org
admins, and for admins of the project a record belonged to.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any, Protocol

from edge.access.engine import Permissions
from edge.kernel import audit, clock
from edge.kernel.errors import Conflict, DeleteProtected, Denied, NotFound
from edge.kernel.listing import ListQuery, Page, fetch
from edge.kernel.principal import Principal
from storage import trash as store
from storage.database import Database
from storage.records import AuditEvent
from storage.rows import Row, Tx

TABLE = store.LIST

KINDS = ("user", "device", "group", "role", "project")
ROW_FIELDS = ("id", "kind", "name", "project_id", "deleted_date", "deleted_by", "purge_after")


class Revoker(Protocol):
    async def revoke_accounts(self, account_ids: list[str]) -> None: ...


class Trashed(Protocol):
    """What every deletable record has."""

    @property
    def id(self) -> str: ...

    @property
    def org_id(self) -> str: ...

    @property
    def is_delete_protected(self) -> bool: ...


class RestoreBlocked(Conflict):
    def __init__(self, table: str) -> None:
        super().__init__(
            f"Cannot restore: a row of {table} now takes its place (a name or alias in use)"
        )


class Trash:
    def __init__(
        self, db: Database, permissions: Permissions, tokens: Revoker, retention_days: int
    ) -> None:
        self._db = db
        self._permissions = permissions
        self._tokens = tokens
        self._retention = timedelta(days=retention_days)
        self._after_erase: Callable[[], Awaitable[None]] | None = None

    def after_erase(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Run `hook` after anything is erased: a group's files leave disk then (their
        rows went in the erasing transaction; edge/files/sweeps.py unlinks the blobs)."""
        self._after_erase = hook

    async def delete(
        self,
        principal: Principal,
        kind: str,
        record: Trashed,
        *,
        force: bool,
        may_force: bool,
        permanent: bool,
    ) -> None:
        """Move to the trash (or erase, when permanent); end the sessions it held.
        `may_force`: the caller is an admin of the record."""
        if force and not may_force:
            raise Denied("force: only admins may force a delete")
        if record.is_delete_protected and not force:
            raise DeleteProtected(kind.capitalize())
        now = clock.now()
        deleted = clock.iso(now)
        entry = {
            "id": record.id,
            "kind": kind,
            "org_id": record.org_id,
            "project_id": _project_of(kind, record),
            "name": _name_of(record),
            "deleted_date": deleted,
            "deleted_by": principal.actor,
            "purge_after": clock.iso(now + self._retention),
        }

        events = _audited(principal, kind, record, permanent)

        def write(conn: Tx) -> list[str]:
            accounts = store.accounts_ended(conn, kind, record.id, deleted)
            if permanent:
                store.erase_contents(conn, kind, record.id)
            else:
                store.put(conn, entry, store.snapshot(conn, kind, record.id))
            if not store.remove(conn, kind, record.id):
                raise NotFound(f"{kind.capitalize()} not found")
            audit.add(conn, *events)
            return accounts

        ended = await self._db.write(write)
        await self._tokens.revoke_accounts(ended)
        if permanent:
            await self.erased()

    async def list(self, principal: Principal, query: ListQuery) -> Page:
        org_id, projects = self._reach(principal)
        page = await fetch(self._db, TABLE, query, *store.reach(org_id, projects))
        page.rows = [present(row) for row in page.rows]
        return page

    def get(self, principal: Principal, entry_id: str) -> Row:
        return present(self._entry(principal, entry_id))

    async def restore(self, principal: Principal, entry_id: str) -> None:
        entry = self._entry(principal, entry_id)

        def write(conn: Tx) -> None:
            try:
                store.restore(conn, entry)
            except store.RestoreConflict as exc:
                raise RestoreBlocked(exc.table) from None

        events = _restored(principal, entry)
        await self._db.write(audit.along(write, *events))

    async def erase(self, principal: Principal, entry_id: str) -> None:
        self._entry(principal, entry_id)
        await self._db.write(lambda c: store.erase(c, entry_id))
        await self.erased()

    async def erased(self) -> None:
        if self._after_erase is not None:
            await self._after_erase()

    def _reach(self, principal: Principal) -> tuple[str, Sequence[str] | None]:
        """The org, and the projects whose entries the caller may see (None: all)."""
        if principal.org_id is None:
            raise Denied("Sign in to an organization first (staff: with a scope)")
        caller = self._permissions.caller(principal)
        if caller.is_org_admin:
            return principal.org_id, None
        projects = caller.admin_projects()
        if not projects:
            raise Denied("Only admins may see deleted records")
        return principal.org_id, projects

    def _entry(self, principal: Principal, entry_id: str) -> Row:
        org_id, projects = self._reach(principal)
        entry = self._db.read(lambda c: store.get(c, entry_id))
        if entry is None or entry["org_id"] != org_id:
            raise NotFound("No deleted record has this ID")
        if projects is not None and entry["project_id"] not in projects:
            raise NotFound("No deleted record has this ID")
        return entry


def present(row: Row) -> Row:
    return {name: row[name] for name in ROW_FIELDS if row.get(name) is not None}


def _project_of(kind: str, record: Any) -> str | None:
    return None if kind == "project" else getattr(record, "project_id", None)


def _name_of(record: Any) -> str:
    return str(getattr(record, "name", None) or getattr(record, "username", None) or record.id)


__all__ = ["KINDS", "Trash", "present"]


AUDITED = ("user", "role", "device")  # deletions the audit log records


def _audited(
    principal: Principal, kind: str, record: Trashed, permanent: bool
) -> tuple[AuditEvent, ...]:
    if kind not in AUDITED:
        return ()
    details = {"permanent": permanent, "name": _name_of(record)}
    target = (kind, record.id)
    return (
        audit.event(
            f"{kind}_deleted", principal, org_id=record.org_id, target=target, details=details
        ),
    )


def _restored(principal: Principal, entry: Row) -> tuple[AuditEvent, ...]:
    """An account or role brought back from the trash (with the access it held)."""
    kind = str(entry["kind"])
    if kind not in AUDITED:
        return ()
    target = (kind, str(entry["id"]))
    details = {"name": entry["name"]}
    org_id = str(entry["org_id"])
    return (
        audit.event(f"{kind}_restored", principal, org_id=org_id, target=target, details=details),
    )
