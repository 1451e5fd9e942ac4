"""Projects: the second level of a tenant, with their own settings, aliases and sign-in.

A new project takes its organization's shared settings as its defaults (a copy made at
creation: changing the org later does not change its projects). Who may do what follows
docs/permissions.md through `standing`, the one place that reads a caller's grants for a
project.
"""

from __future__ import annotations

from typing import Any

from edge.access import values as access_values
from edge.access.engine import Caller, Permissions
from edge.access.standing import ProjectStanding, project_standing
from edge.kernel import clock, fields, ids
from edge.kernel.errors import AliasTaken, Conflict, Denied, NotFound, ValidationError
from edge.kernel.listing import CursorCodec, ListQuery, Page, fetch
from edge.kernel.principal import Principal
from edge.tenancy.orgs import Orgs
from edge.tenancy.settings import LOGIN_FIELDS, Rule, of_org, validated
from edge.tenancy.settings import SETTINGS as ORG_SETTINGS
from edge.tenancy.trash import Trash
from storage import access as access_store
from storage import aliases, visibility
from storage import projects as store
from storage.database import Database
from storage.listing import NOTHING
from storage.records import Access, Org, Project, User
from storage.rows import Tx

TABLE = store.LIST
# Settings a new project copies from its organization unless the request sets them.
INHERITED = (
    "use_legacy_data_and_files_permissions",
    "groups_require_delete_permission_to_put_data_by_default",
    "group_delete_protection_on_by_default",
    "role_delete_protection_on_by_default",
    "user_delete_protection_on_by_default",
    "device_delete_protection_on_by_default",
    "device_owners_have_admin_access",
    "device_owners_can_tunnel",
    "device_creators_are_owners_by_default",
    "pii_admin_only",
    "default_locale",
    "default_from_address",
    "reset_token_expire_hours",
    "access_token_expire_hours",
    "refresh_token_expire_hours",
    "session_expire_mins",
    "allowed_login_fields",
)
OWN_DEFAULTS: dict[str, Any] = {"custom_settings": {}, "ui_config": {}}
SETTINGS = (*INHERITED, *OWN_DEFAULTS)  # a project's settings, by name
COLUMNS: dict[str, Rule] = {
    "name": fields.identifier,
    "description": fields.description,
    "tags": fields.tags,
    "is_active": fields.boolean,
    "is_delete_protected": fields.boolean,
}


class ProjectNameTaken(Conflict):
    def __init__(self, name: str) -> None:
        super().__init__(f"name: a project named '{name}' already exists in this organization")


class LoginFieldConflict(Conflict):
    def __init__(self) -> None:
        super().__init__(
            "allowed_login_fields: one login value would name more than one account of this "
            "project (for example a phone number two accounts share)"
        )


class Projects:
    def __init__(
        self,
        db: Database,
        cursors: CursorCodec,
        orgs: Orgs,
        permissions: Permissions,
        trash: Trash,
    ) -> None:
        self._db = db
        self.cursors = cursors
        self._orgs = orgs
        self._permissions = permissions
        self._trash = trash

    # -- reading -----------------------------------------------------------------------
    def caller(self, principal: Principal) -> Caller:
        if principal.org_id is None:
            raise Denied("Sign in to an organization (staff: with a scope) to manage projects")
        return self._permissions.caller(principal)

    def open(
        self, principal: Principal, project_id: str
    ) -> tuple[Caller, Project, ProjectStanding]:
        """The caller, the project and their standing; 404 unless they know it."""
        caller = self.caller(principal)
        row = self._db.read(lambda c: store.get_in_org(c, principal.org_id or "", project_id))
        where = project_standing(caller, project_id)
        if row is None or not where.known:
            raise NotFound("Project not found")
        return caller, row, where

    def get(self, principal: Principal, project_id: str) -> dict[str, Any]:
        _, row, where = self.open(principal, project_id)
        if not where.read:
            raise Denied("Not permitted to read this project")
        return present(row, admin=where.admin)

    def mine(self, principal: Principal) -> dict[str, Any]:
        """Any member signed in to the project may read its settings (no can_read needed)."""
        _, row, where = self.open(principal, _my_project(principal))
        return present(row, admin=where.admin)

    async def list(self, principal: Principal, query: ListQuery) -> Page:
        caller = self.caller(principal)
        scoped = principal.project_id
        scope = store.in_org(principal.org_id or "", scoped)
        if scoped is not None and not project_standing(caller, scoped).read:
            scope = NOTHING
        elif scoped is None and not caller.sees_all("project"):
            scope &= visibility.projects(caller.grantees)
        page = await fetch(self._db, TABLE, query, *scope)
        page.rows = [present(r, admin=project_standing(caller, r.id).admin) for r in page.rows]
        return page

    # -- writing -----------------------------------------------------------------------
    async def create(self, principal: Principal, body: dict[str, Any]) -> str:
        caller = self.caller(principal)
        if not caller.org.allows("project", "create"):
            raise Denied("Not permitted to create projects")
        org = self._orgs.get_row(principal.org_id or "")
        alias = fields.alias("alias", body.get("alias"))
        row = _new_project(principal, org, body, alias)
        own = fields.boolean("create_own_access", body.get("create_own_access", True))
        access = _creator_access(principal, row) if own and principal.kind == "user" else None
        asked = "allowed_login_fields" in body  # inheriting the org's enables nothing new
        enabling = set(settings_of(row)["allowed_login_fields"]) if asked else set()

        def write(conn: Tx) -> None:
            _check_unique(conn, row, row.name)
            _check_logins(conn, row, enabling)
            if alias and not aliases.claim(conn, alias, "project", row.id):
                raise AliasTaken(alias)
            store.create(conn, row)
            if access:
                access_store.create(conn, access)

        await self._db.write(write)
        return row.id

    async def patch(self, principal: Principal, project_id: str, body: dict[str, Any]) -> None:
        _, current, where = self.open(principal, project_id)
        if not where.update:
            raise Denied("Not permitted to update this project")
        suspending = "is_active" in body and body["is_active"] != current.is_active
        if suspending and not where.manage:
            raise Denied("Only admins may suspend or reactivate a project")
        await self._apply(principal, current, body)

    async def patch_mine(self, principal: Principal, body: dict[str, Any]) -> None:
        _, current, where = self.open(principal, _my_project(principal))
        if not where.manage:
            raise Denied("Only admins of this project may change its settings")
        await self._apply(principal, current, body)

    async def delete(
        self, principal: Principal, project_id: str, *, force: bool, permanent: bool
    ) -> None:
        _, current, where = self.open(principal, project_id)
        if not where.delete:
            raise Denied("Not permitted to delete this project")
        await self._trash.delete(
            principal, "project", current, force=force, may_force=where.admin, permanent=permanent
        )

    async def _apply(self, principal: Principal, current: Project, body: dict[str, Any]) -> None:
        changes = {n: rule(n, body[n]) for n, rule in COLUMNS.items() if n in body}
        before = settings_of(current)
        after = {**before, **validated(body, SETTINGS)}
        enabling = set(after["allowed_login_fields"]) - set(before["allowed_login_fields"])
        changes["settings"] = after
        if "name" in changes:
            changes["name_folded"] = changes["name"].casefold()
        changes.update(last_updated_date=clock.now_iso(), last_updated_by=principal.actor)
        suspended = current.is_active and changes.get("is_active") is False
        has_alias = "alias" in body
        alias = fields.alias("alias", body.get("alias")) if has_alias else None
        project_id = current.id

        def write(conn: Tx) -> None:
            if "name" in changes:
                _check_unique(conn, current, changes["name"])
            _check_logins(conn, current, enabling)
            if has_alias:
                aliases.release_owner(conn, project_id)
                if alias and not aliases.claim(conn, alias, "project", project_id):
                    raise AliasTaken(alias)
                changes["alias"] = alias
            if not store.patch(conn, project_id, changes):
                raise NotFound("Project not found")
            if suspended:
                store.end_sessions(conn, project_id)

        await self._db.write(write)

    # -- sign-in -----------------------------------------------------------------------
    def resolve_client(
        self, client_id: str, field: str = "client_id"
    ) -> tuple[Org, Project | None]:
        """The org, and the project if the client ID (an ID or alias, any case) names one."""
        text = client_id.strip()
        project = self._db.read(lambda c: store.get(c, text))
        if project is None:
            holder = self._db.read(lambda c: aliases.find(c, text.lower()))
            if holder is not None and holder["owner_kind"] == "project":
                project = self._db.read(lambda c: store.get(c, holder["owner_id"]))
        if project is None:
            return self._orgs.resolve_client(text, field), None
        return self._orgs.get_row(project.org_id), project

    def find_login(self, org: Org, project: Project | None, login: str) -> User | None:
        """The account a login names through the allowed login fields of the project, or of
        the org when signing in at org level; None when it names nobody, or two accounts."""
        settings = settings_of(project) if project is not None else of_org(org)
        enabled = [f for f in LOGIN_FIELDS if f in settings["allowed_login_fields"]]
        phone = _phone_of(login)
        if phone is None:
            enabled = [f for f in enabled if f != "phone_number"]
        matches = self._db.read(
            lambda c: store.login_matches(
                c,
                org.id,
                None if project is None else project.id,
                enabled,
                login.casefold(),
                phone or "",
            )
        )
        for name in enabled:
            if name in matches:
                found = matches[name]
                return found[0] if len(found) == 1 else None
        return None

    def admit(self, project: Project, account_id: str) -> None:
        """Refuse sign-in to a suspended project, or by someone without access to it."""
        if not project.is_active:
            raise Denied("This project is suspended")
        caller = self._permissions.grantee(project.org_id, account_id)
        if not (caller.is_org_admin or caller.project(project.id).held):
            raise Denied("This account has no access to this project")

    def session_project(self, project_id: str) -> Project:
        row = self._db.read(lambda c: store.get(c, project_id))
        if row is None:
            raise Denied("This project no longer exists")
        return row

    def client_interface(self, client_id: str) -> dict[str, Any]:
        """What a sign-in page needs to know about an org or project (public)."""
        try:
            org, project = self.resolve_client(client_id)
        except ValidationError:
            raise NotFound("No organization or project has this client ID") from None
        settings = settings_of(project) if project else of_org(org)
        return {
            "client_id": (project or org).id,
            "allowed_login_fields": list(settings["allowed_login_fields"]),
            "ui_config": settings["ui_config"],
        }


def _my_project(principal: Principal) -> str:
    if principal.project_id is None:
        raise NotFound("This session is not signed in to a project")
    return principal.project_id


def _check_unique(conn: Tx, row: Project, name: str) -> None:
    if store.name_taken(conn, row.org_id, name.casefold(), row.id):
        raise ProjectNameTaken(name)


def _check_logins(conn: Tx, row: Project, enabling: set[str]) -> None:
    """Enabling a login field must not make one login value name two accounts."""
    if not enabling:
        return
    enabled = [
        f for f in LOGIN_FIELDS if f in settings_of(row)["allowed_login_fields"] or f in enabling
    ]
    if store.ambiguous_login(conn, row.org_id, row.id, enabled):
        raise LoginFieldConflict()


def _new_project(
    principal: Principal, org: Org, body: dict[str, Any], alias: str | None
) -> Project:
    columns = {n: rule(n, body[n]) for n, rule in COLUMNS.items() if n in body}
    if "name" not in columns:
        raise ValidationError("name", "is required")
    org_settings = of_org(org)
    settings = {**{n: org_settings[n] for n in INHERITED}, **OWN_DEFAULTS}
    settings.update(validated(body, SETTINGS))
    protected = org_settings["project_delete_protection_on_by_default"]
    now = clock.now_iso()
    return Project(
        id=ids.new_id(),
        org_id=org.id,
        name=columns["name"],
        name_folded=columns["name"].casefold(),
        alias=alias,
        description=columns.get("description", ""),
        tags=columns.get("tags", []),
        is_active=True,
        is_delete_protected=columns.get("is_delete_protected", protected),
        settings=settings,
        created_date=now,
        created_by=principal.actor,
        last_updated_date=now,
        last_updated_by=principal.actor,
    )


def _creator_access(principal: Principal, project: Project) -> Access:
    values = access_values.full_values("project")
    return access_values.new_access(
        "project", project.id, principal.account_id, "user", project.org_id, principal.actor, values
    )


def settings_of(row: Project) -> dict[str, Any]:
    """A project's effective settings: its own, over the org defaults it inherits."""
    stored = row.settings
    defaults = {n: ORG_SETTINGS[n][0] for n in INHERITED} | OWN_DEFAULTS
    return {name: stored.get(name, default) for name, default in defaults.items()}


def _phone_of(login: str) -> str | None:
    """The login as a stored phone number, when it is shaped like one."""
    try:
        return fields.phone("username", login)
    except ValidationError:
        return None


def present(row: Project, *, admin: bool) -> dict[str, Any]:
    """A project as the interface's ProjectSchema (AdminProjectSchema for admins)."""
    out: dict[str, Any] = {
        "id": row.id,
        "name": row.name,
        "description": row.description,
        "tags": row.tags,
        "is_delete_protected": row.is_delete_protected,
        "created_date": row.created_date,
        "created_by": row.created_by,
        "last_updated_date": row.last_updated_date,
        "last_updated_by": row.last_updated_by,
    }
    if row.alias:
        out["alias"] = row.alias
    if admin:
        out["is_active"] = row.is_active
    out.update(settings_of(row))
    return out
