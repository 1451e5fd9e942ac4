"""What a device enrolled with a claim gets (docs/provisioning.md): its groups with the
access it holds in each, its tags and its `iot_scopes`. Checked when the claim is made, by
the rules that would apply if its maker gave the same access by hand:

- each group is a group of the organization, in the claim's project or org-level (the
  home-project rule of access objects), and its maker is an admin of it;
- the access in each group is a group access body (CreateGroupAccessBody: a field it does
  not know is refused, never dropped), its data and file paths under the legacy setting of
  the group's project; a refusal names the field under `template.groups.<group ID>.`;
- tags and `iot_scopes` follow the device's own rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from edge.access import values as access_values
from edge.access.engine import Caller
from edge.access.kinds import require_home
from edge.access.levels import BLOCKS, BLOCKS_BY_KIND
from edge.devices.topics import normalize_scopes
from edge.kernel import fields
from edge.kernel.errors import Denied, ValidationError
from edge.tenancy import settings
from storage import groups as group_store
from storage.database import Database

FIELD = "template"
MAX_GROUPS = 32
LEGACY = "use_legacy_data_and_files_permissions"
Template = dict[str, Any]
# The fields of a group access create body (CreateGroupAccessBody): no `is_active`.
GROUP_FIELDS = frozenset(
    (
        *(name for name in access_values.FLAG_NAMES if name != "is_active"),
        "tags",
        "data_paths",
        "file_paths",
        *(BLOCKS[resource] for resource in BLOCKS_BY_KIND["group"]),
    )
)


def checked(
    db: Database, grants: Caller, org_id: str, project_id: str | None, given: Any
) -> Template:
    """The template of a create body (absent: no groups, tags or scopes)."""
    body = fields.mapping(FIELD, {} if given is None else given)
    unknown = sorted(set(body) - {"groups", "tags", "iot_scopes"})
    if unknown:
        raise ValidationError(f"{FIELD}.{unknown[0]}", "is not a field of a claim's template")
    groups = fields.mapping(f"{FIELD}.groups", body.get("groups", {}))
    if len(groups) > MAX_GROUPS:
        raise ValidationError(f"{FIELD}.groups", f"must hold at most {MAX_GROUPS} groups")
    return {
        "groups": {
            group_id: _group_access(db, grants, org_id, project_id, group_id, access)
            for group_id, access in groups.items()
        },
        "tags": fields.tags(f"{FIELD}.tags", body.get("tags", [])),
        "iot_scopes": normalize_scopes(f"{FIELD}.iot_scopes", body.get("iot_scopes", {})),
    }


def _group_access(
    db: Database, grants: Caller, org_id: str, project_id: str | None, group_id: str, body: Any
) -> dict[str, Any]:
    where = f"{FIELD}.groups.{group_id}"
    group = db.read(lambda c: group_store.get(c, group_id))
    if group is None or group.org_id != org_id:
        raise ValidationError(where, "does not name a group of this organization")
    require_home(where, "claim's device", project_id, group.project_id)
    if not grants.is_group_admin(group.id, group.project_id):
        raise Denied(f"{where}: only admins of the group may give access to it")
    legacy = bool(settings.effective(db, org_id, group.project_id, LEGACY))
    access = fields.mapping(where, body)
    unknown = sorted(set(access) - GROUP_FIELDS)
    if unknown:
        raise ValidationError(f"{where}.{unknown[0]}", "is not a field of a group access")
    try:
        return access_values.values_of("group", access, legacy=legacy)
    except ValidationError as refused:
        raise ValidationError(f"{where}.{refused.field}", _rule(refused)) from refused


def summary(template: Template, group_ids: Iterable[str] | None = None) -> dict[str, Any]:
    """What a template gives, for the audit log: each group (of `group_ids`, else all) with
    whether it makes the device a group admin, the scopes and the tags."""
    groups = template.get("groups", {})
    chosen = groups if group_ids is None else [g for g in group_ids if g in groups]
    return {
        "groups": [{"id": g, "is_admin": bool(groups[g].get("is_admin"))} for g in chosen],
        "iot_scopes": template.get("iot_scopes", {}),
        "tags": template.get("tags", []),
    }


def _rule(refused: ValidationError) -> str:
    """The message of a refusal without its field (`<field>: <rule>`)."""
    text = str(refused)
    return text.partition(": ")[2] if refused.field else text
