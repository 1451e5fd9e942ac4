"""Effective settings: a project's value when it sets one, else its organization's, else
the default declared in edge/tenancy/orgs.py."""

from __future__ import annotations

from typing import Any

from edge.errors import Denied, ValidationError
from edge.principal import Principal
from edge.tenancy.orgs import SETTINGS as ORG_SETTINGS
from storage import orgs as org_store
from storage import projects as project_store
from storage.database import Database
from storage.rows import Tx


def effective(db: Database, org_id: str, project_id: str | None, name: str) -> Any:
    return effective_many(db, org_id, project_id, (name,))[name]


def effective_many(
    db: Database, org_id: str, project_id: str | None, names: tuple[str, ...]
) -> dict[str, Any]:
    """Several settings for one org (and project) from one read of each."""
    # Read once per loop iteration's snapshot: several requests of one iteration share it.
    org = db.read_memo(f"org:{org_id}", lambda c: org_store.get(c, org_id))
    project = None
    if project_id:
        key = f"project:{org_id}:{project_id}"
        project = db.read_memo(key, lambda c: project_store.get_in_org(c, org_id, project_id))
    out = {}
    for name in names:
        value = ORG_SETTINGS[name][0]
        if org is not None:
            value = org.settings.get(name, value)
        if project is not None:
            value = project.settings.get(name, value)
        out[name] = value
    return out


def role_limit(conn: Tx, org_id: str) -> int:
    """The org's `max_roles_per_user`, read inside a write so a race cannot pass it."""
    org = org_store.get(conn, org_id)
    limit = ORG_SETTINGS["max_roles_per_user"][0]
    if org is not None:
        limit = org.settings.get("max_roles_per_user", limit)
    return int(limit)


def require_org(principal: Principal) -> str:
    if principal.org_id is None:
        raise Denied("Sign in to an organization first (staff: with a scope)")
    return principal.org_id


def check_project(db: Database, org_id: str, project_id: Any) -> str | None:
    """A project ID named in a body: it must be a project of the caller's organization."""
    if project_id is None:
        return None
    if not isinstance(project_id, str) or not project_id.strip():
        raise ValidationError("project_id", "must be a project ID")
    if db.read(lambda c: project_store.get_in_org(c, org_id, project_id.strip())) is None:
        raise ValidationError("project_id", "does not name a project of this organization")
    return project_id.strip()
