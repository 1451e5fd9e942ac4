"""Project access: which users and roles hold access to a project, and with what rights.

Only admins of a project (org admins included) may create, change or delete its access.
Losing project admin status (is_admin or is_active turned off on an admin access, or the
access deleted) ends the sessions of the accounts that lost it: the grantee, or for a
role every holder of the role, unless they are still project admins some other way.
"""

from __future__ import annotations

import json
from typing import Any

from edge.access import access_objects, grants, permissions
from edge.auth.tokens import Tokens
from edge.errors import DeleteProtected, Denied, NotFound, ValidationError
from edge.principal import Principal
from edge.tenancy.projects import Projects
from storage import access as store
from storage import accounts
from storage import projects as project_store
from storage.database import Database
from storage.rows import Row

KIND = "project"


class ProjectAccess:
    def __init__(self, db: Database, tokens: Tokens, projects: Projects) -> None:
        self._db = db
        self._tokens = tokens
        self._projects = projects

    def get(self, principal: Principal, project_id: str, grantee_id: str) -> dict[str, Any]:
        caller, project, where = self._projects.open(principal, project_id)
        own = grantee_id == principal.account_id or grantee_id in caller.roles
        if not (where.read or where.admin or own):
            raise Denied("Not permitted to read access to this project")
        return present(self._row(project_id, grantee_id), project, admin=where.admin)

    async def create(
        self, principal: Principal, project_id: str, grantee_id: str, body: dict[str, Any]
    ) -> None:
        project = self._admin_open(principal, project_id)
        kind = self._grantee_kind(project, grantee_id)
        values = access_objects.values_of(KIND, body)
        row = grants.new_row(
            KIND, project_id, grantee_id, kind, project["org_id"], principal.actor, values
        )
        await access_objects.create(self._db, row)

    async def patch(
        self, principal: Principal, project_id: str, grantee_id: str, body: dict[str, Any]
    ) -> None:
        project = self._admin_open(principal, project_id)
        current = self._row(project_id, grantee_id)
        values = access_objects.values_of(KIND, body)
        changes = access_objects.column_changes(KIND, current, values, principal.actor)
        await access_objects.patch(self._db, current["id"], changes)
        await self._after_change(project, current, {**current, **changes})

    async def delete(
        self, principal: Principal, project_id: str, grantee_id: str, *, force: bool
    ) -> None:
        project = self._admin_open(principal, project_id)
        current = self._row(project_id, grantee_id)
        if current["is_delete_protected"] and not force:
            raise DeleteProtected("Project access")
        await access_objects.delete(self._db, current["id"])
        await self._after_change(project, current, None)

    # -- helpers ------------------------------------------------------------------------
    def _admin_open(self, principal: Principal, project_id: str) -> Row:
        _, project, where = self._projects.open(principal, project_id)
        if not where.admin:
            raise Denied("Only admins of this project may manage its access")
        return project

    def _row(self, project_id: str, grantee_id: str) -> Row:
        row = self._db.read(lambda c: store.get(c, project_id, grantee_id))
        if row is None or row["kind"] != KIND:
            raise NotFound("Project access not found")
        return row

    def _grantee_kind(self, project: Row, grantee_id: str) -> str:
        """A user or role of the project's org, org-level or of this very project."""
        kind = self._db.read(lambda c: accounts.kind_of(c, project["org_id"], grantee_id))
        if kind is None:
            raise NotFound("Grantee not found")
        _, home = self._db.read(lambda c: project_store.account_project(c, grantee_id))
        if home is not None and home != project["id"]:
            raise ValidationError("grantee_id", f"this {kind} belongs to another project")
        return kind

    async def _after_change(self, project: Row, before: Row, after: Row | None) -> None:
        """End the sessions of accounts that were project admins through this access only."""
        if not _grants_admin(before) or (after is not None and _grants_admin(after)):
            return
        if before["grantee_kind"] == "role":
            holders = self._db.read(lambda c: store.holders_of_role(c, before["grantee_id"]))
        else:
            holders = [before["grantee_id"]]
        lost = [a for a in holders if not self._still_admin(project, a)]
        await self._tokens.revoke_accounts(lost)

    def _still_admin(self, project: Row, account_id: str) -> bool:
        who = Principal("user", account_id, None, project["org_id"])
        return permissions.load(self._db, who).is_project_admin(project["id"])


def _grants_admin(row: Row) -> bool:
    return bool(row["is_admin"]) and bool(row["is_active"])


def present(row: Row, project: Row, *, admin: bool) -> dict[str, Any]:
    """ProjectAccessSchema, with `is_active` (AdminProjectAccessSchema) for admins only."""
    return {
        **access_objects.present(row, admin=admin),
        "project_name": project["name"],
        "project_description": project["description"],
        "project_tags": json.loads(project["tags"]),
    }
