"""Organization and project settings: each declared once here (its default and its value
rule), validated here whoever sets it (staff on an org, its admins on their own org, a
project's admins), and read as effective values: a project's value when it sets one, else
its organization's, else the default."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from edge.kernel import fields
from edge.kernel.errors import Denied, ValidationError
from edge.kernel.principal import Principal
from storage import orgs as org_store
from storage import projects as project_store
from storage.database import Database
from storage.records import Org, Project
from storage.rows import Tx

LOGIN_FIELDS = ("username", "email", "phone_number")
Rule = Callable[[str, Any], Any]


def _range(low: int, high: int) -> Rule:
    return lambda field, value: fields.integer(field, value, low, high)


def _logins(field: str, value: Any) -> list[str]:
    return fields.choices(field, value, LOGIN_FIELDS)


# The whole-number settings' ranges (also published in the OpenAPI document).
RANGES: dict[str, tuple[int, int]] = {
    "reset_token_expire_hours": (1, 168),
    "access_token_expire_hours": (1, 24),
    "refresh_token_expire_hours": (1, 8760),
    "session_expire_mins": (3, 15),
    "max_roles_per_user": (1, 10000),
}
# Settings kept in the org's settings document: default and rule, declared once.
SETTINGS: dict[str, tuple[Any, Rule]] = {
    "mfa_required": (False, fields.boolean),
    "use_legacy_data_and_files_permissions": (False, fields.boolean),
    "groups_require_delete_permission_to_put_data_by_default": (False, fields.boolean),
    "device_owners_have_admin_access": (False, fields.boolean),
    "device_owners_can_tunnel": (False, fields.boolean),
    "device_creators_are_owners_by_default": (False, fields.boolean),
    "project_delete_protection_on_by_default": (False, fields.boolean),
    "group_delete_protection_on_by_default": (False, fields.boolean),
    "role_delete_protection_on_by_default": (False, fields.boolean),
    "user_delete_protection_on_by_default": (False, fields.boolean),
    "device_delete_protection_on_by_default": (False, fields.boolean),
    "pii_admin_only": (False, fields.boolean),
    "default_locale": ("en-US", fields.locale),
    "default_from_address": ("no-reply@edge.local", fields.email),
    "reset_token_expire_hours": (24, _range(*RANGES["reset_token_expire_hours"])),
    "access_token_expire_hours": (1, _range(*RANGES["access_token_expire_hours"])),
    "refresh_token_expire_hours": (24, _range(*RANGES["refresh_token_expire_hours"])),
    "session_expire_mins": (5, _range(*RANGES["session_expire_mins"])),
    "allowed_login_fields": (list(LOGIN_FIELDS), _logins),
    "custom_settings": ({}, fields.mapping),
    "ui_config": ({}, fields.mapping),
    "max_roles_per_user": (20, _range(*RANGES["max_roles_per_user"])),
}


def validated(body: Mapping[str, Any], names: Iterable[str] = SETTINGS) -> dict[str, Any]:
    """The settings among `names` that the body sets, each checked by its rule (in the
    order of `names`, so the first bad one is the one named)."""
    out = {}
    for name in names:
        if name in body:
            value = fields.normalize_locale(body[name]) if name == "default_locale" else body[name]
            out[name] = SETTINGS[name][1](name, value)
    return out


def of_org(org: Org) -> dict[str, Any]:
    """Every setting of an organization: its own value, else the default."""
    return {name: org.settings.get(name, default) for name, (default, _) in SETTINGS.items()}


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
    return of_rows(org, project, names)


def of_rows(org: Org | None, project: Project | None, names: Iterable[str]) -> dict[str, Any]:
    """The effective rule, once: a setting's default, over it the org's own value, over
    that the project's (for rows the caller has read already)."""
    out = {}
    for name in names:
        value = SETTINGS[name][0]
        if org is not None:
            value = org.settings.get(name, value)
        if project is not None:
            value = project.settings.get(name, value)
        out[name] = value
    return out


def role_limit(conn: Tx, org_id: str) -> int:
    """The org's `max_roles_per_user`, read inside a write so a race cannot pass it."""
    org = org_store.get(conn, org_id)
    limit = SETTINGS["max_roles_per_user"][0]
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
