"""Organizations: the tenants of an installation. Only staff create, list and delete them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from edge.access import values as access_values
from edge.kernel import audit, clock, fields, ids
from edge.kernel.errors import AliasTaken, DeleteProtected, Denied, NotFound, ValidationError
from edge.kernel.listing import CursorCodec, ListQuery, Page, fetch
from edge.kernel.principal import Principal
from edge.tenancy.settings import SETTINGS, Rule, of_org, validated
from storage import access as access_store
from storage import aliases
from storage import orgs as store
from storage import users as user_store
from storage.database import Database
from storage.records import AuditEvent, Org, User
from storage.rows import Tx

TABLE = store.LIST
COLUMNS: dict[str, Rule] = {
    "name": fields.org_name,
    "description": fields.description,
    "tags": fields.tags,
    "is_active": fields.boolean,
    "is_delete_protected": fields.boolean,
}


# An organization's first admin as a new user row, from the `admin` of a create body (its
# e-mail and password, checked): the user kind makes it (edge/accounts/user_kind.py), and the
# composition root hands it in, since accounts stand above tenancy.
FirstAdmin = Callable[[str, str, dict[str, str]], Awaitable[User]]


class Orgs:
    def __init__(self, db: Database, cursors: CursorCodec, first_admin: FirstAdmin) -> None:
        self._db = db
        self.cursors = cursors
        self._first_admin = first_admin

    # -- reading -----------------------------------------------------------------------
    def get_row(self, org_id: str) -> Org:
        row = self._db.read(lambda c: store.get(c, org_id))
        if row is None:
            raise NotFound("Organization not found")
        return row

    def get(self, principal: Principal, org_id: str) -> dict[str, Any]:
        _require_staff(principal)
        return present(self.get_row(org_id))

    def resolve_client(self, client_id: str, field: str = "client_id") -> Org:
        """The org named by a client ID: its ID or its alias (any case)."""
        row = self._db.read(lambda c: store.get(c, client_id))
        if row is None:
            holder = self._db.read(lambda c: aliases.find(c, client_id.strip().lower()))
            if holder is not None and holder["owner_kind"] == "org":
                row = self._db.read(lambda c: store.get(c, holder["owner_id"]))
        if row is None:
            raise ValidationError(field, "does not name an organization")
        return row

    async def list(self, principal: Principal, query: ListQuery) -> Page:
        _require_staff(principal)
        page = await fetch(self._db, store.LIST, query)
        page.rows = [present(row) for row in page.rows]
        return page

    # -- writing -----------------------------------------------------------------------
    async def create(
        self,
        principal: Principal,
        body: dict[str, Any],
        admin: dict[str, str] | None = None,
    ) -> str:
        """A new organization (and its first admin, when given), by staff or the operator
        (`edge admin orgs create`), whom the audit log names as the actor."""
        _require_staff(principal)
        if "name" not in body:
            raise ValidationError("name", "is required")
        alias = fields.alias("alias", body.get("alias"))
        row = self._new_org(principal, body, alias)
        admin_row = await self._first_admin(row.id, principal.actor, admin) if admin else None

        def write(conn: Tx) -> None:
            if alias and not aliases.claim(conn, alias, "org", row.id):
                raise AliasTaken(alias)
            store.create(conn, row)
            if admin_row:
                user_store.create(conn, admin_row)
                access_store.create(
                    conn, access_values.org_admin(row.id, admin_row.id, principal.actor)
                )

        events = _created(principal, row, admin_row)
        await self._db.write(audit.along(write, *events))
        return row.id

    async def patch(self, principal: Principal, org_id: str, body: dict[str, Any]) -> None:
        _require_staff(principal)
        current = self.get_row(org_id)
        changes = _validated_columns(body)
        changes["settings"] = {**of_org(current), **validated(body)}
        if "name" in changes:
            changes["name_folded"] = changes["name"].casefold()
        changes.update(last_updated_date=clock.now_iso(), last_updated_by=principal.actor)
        has_alias = "alias" in body
        alias = fields.alias("alias", body.get("alias")) if has_alias else None

        def write(conn: Tx) -> None:
            if has_alias:
                aliases.release_owner(conn, org_id)
                if alias and not aliases.claim(conn, alias, "org", org_id):
                    raise AliasTaken(alias)
                changes["alias"] = alias
            if not store.patch(conn, org_id, changes):
                raise NotFound("Organization not found")

        await self._db.write(write)

    async def delete(self, principal: Principal, org_id: str, *, force: bool) -> None:
        _require_staff(principal)
        current = self.get_row(org_id)
        if current.is_delete_protected and not force:
            raise DeleteProtected("Organization")

        def write(conn: Tx) -> None:
            if not store.delete(conn, org_id):
                raise NotFound("Organization not found")

        await self._db.write(write)

    def _new_org(self, principal: Principal, body: dict[str, Any], alias: str | None) -> Org:
        columns = _validated_columns(body)
        settings = {name: default for name, (default, _) in SETTINGS.items()}
        settings.update(validated(body))
        now = clock.now_iso()
        return Org(
            id=ids.new_id(),
            name=columns["name"],
            name_folded=columns["name"].casefold(),
            alias=alias,
            description=columns.get("description", ""),
            tags=columns.get("tags", []),
            is_active=columns.get("is_active", True),
            is_delete_protected=columns.get("is_delete_protected", False),
            settings=settings,
            created_date=now,
            created_by=principal.actor,
            last_updated_date=now,
            last_updated_by=principal.actor,
        )


def _created(actor: Principal, org: Org, admin: User | None) -> list[AuditEvent]:
    """The organization made, and its first admin (an account made an org admin)."""
    details = {"name": org.name, **({"alias": org.alias} if org.alias else {})}
    made = [
        audit.event(
            "org_created",
            actor,
            org_id=org.id,
            target=("org", org.id),
            details=details,
        )
    ]
    if admin is not None:
        first = {"fields": ["email"], "org_admin": True}
        target = ("user", admin.id)
        made.append(audit.event("user_created", actor, org_id=org.id, target=target, details=first))
    return made


def _require_staff(principal: Principal) -> None:
    if not principal.is_staff:
        raise Denied("Only staff may manage organizations")


def _validated_columns(body: dict[str, Any]) -> dict[str, Any]:
    return {name: rule(name, body[name]) for name, rule in COLUMNS.items() if name in body}


def present(row: Org) -> dict[str, Any]:
    """An org row as the OrgSchema of the interface."""
    out: dict[str, Any] = {
        "id": row.id,
        "name": row.name,
        "description": row.description,
        "tags": row.tags,
        "is_active": row.is_active,
        "is_delete_protected": row.is_delete_protected,
        "created_date": row.created_date,
        "created_by": row.created_by,
        "last_updated_date": row.last_updated_date,
        "last_updated_by": row.last_updated_by,
    }
    if row.alias:
        out["alias"] = row.alias
    out.update(of_org(row))
    return out
