"""The SDK's models of access objects as responses carry them (see api/models.py).

An access object of each target kind (org, project, group, role) opens with the same fields
(`_GRANT`) and closes with the same stamps (`_STAMPS`); what an admin sees adds `is_active`
(and, for a group, its data and file paths), and what an account is shown of its own access
adds the target's name and description. The fragments below say so once; the field order
of each model is the SDK's.
"""

from __future__ import annotations

from api.model_fields import CRUD, Schema, list_of, model, one, page, ref

_GRANT = (
    "is_delete_protected* created_date* can_read* can_update* user_permissions* "
    "device_permissions* tags*"
)
_STAMPS = "last_updated_date created_by last_updated_by"
_GROUP = f"{_GRANT} group_id* grantee_id* is_admin* role_permissions*"
_GROUP_ADMIN = f"{_GROUP} is_active* data_paths* file_paths*"
_PROJECT = f"{_GRANT} project_id* grantee_id* is_admin* group_permissions* role_permissions*"
_ROLE = f"{_GRANT} role_id* account_id*"
_PERMISSIONS = "can_update can_read user_permissions device_permissions role_permissions is_admin"


def _roles(description: str, name: str) -> Schema:
    """All the role access of an account, on one page."""
    return model(description, "role_access*", role_access=list_of(ref(name)))


ACCESS_MODELS: dict[str, Schema] = {
    "AccountGroupAccessList": page(
        "List of group access granted to current account",
        "group_access",
        "AccountGroupAccessSchema",
        "group_ids",
    ),
    "AccountGroupAccessSchema": model(
        "Group access schema plus some info about the group",
        f"{_GROUP_ADMIN} group_name* group_description* group_tags* {_STAMPS}",
    ),
    "AccountOrgAccessInfo": one("Organization access info", "org_access", "OrgAccessSchema"),
    "AccountProjectAccessList": page(
        "List of project access granted to current account",
        "project_access",
        "AccountProjectAccessSchema",
        "project_ids",
    ),
    "AccountProjectAccessSchema": model(
        "Project access schema plus some info about the project",
        f"{_PROJECT} is_active* project_name* project_description* project_tags* {_STAMPS}",
    ),
    "AccountRoleAccessList": _roles(
        "List of role access granted to current account", "RoleAccessSchema"
    ),
    "AdminAccountGroupAccessList": page(
        "List of group access granted to current account, including admin-only fields",
        "group_access",
        "AdminAccountGroupAccessSchema",
    ),
    "AdminAccountGroupAccessSchema": model(
        "Admin group access schema plus some info about the group",
        f"{_GROUP_ADMIN} {_STAMPS} group_name group_description",
    ),
    "AdminAccountProjectAccessList": page(
        "List of project access granted to current account, including admin-only fields",
        "project_access",
        "AdminAccountProjectAccessSchema",
    ),
    "AdminAccountProjectAccessSchema": model(
        "Admin project access schema plus some info about the project",
        f"{_PROJECT} is_active* {_STAMPS} project_name project_description",
    ),
    "AdminAccountRoleAccessList": _roles(
        "List of role access granted to current account, including admin-only fields",
        "AdminRoleAccessSchema",
    ),
    "AdminGroupAccessInfo": one("Access for a group", "group_access", "AdminGroupAccessSchema"),
    "AdminGroupAccessSchema": model(
        "Access for a group plus admin-only fields", f"{_GROUP_ADMIN} {_STAMPS}"
    ),
    "AdminProjectAccessInfo": one(
        "Info on one specific project access plus admin-only fields",
        "project_access",
        "AdminProjectAccessSchema",
    ),
    "AdminProjectAccessSchema": model(
        "Project access schema plus admin-only fields", f"{_PROJECT} is_active* {_STAMPS}"
    ),
    "AdminRoleAccessInfo": one(
        "Info on one specific role access", "role_access", "AdminRoleAccessSchema"
    ),
    "AdminRoleAccessSchema": model("Role access schema", f"{_ROLE} is_active* {_STAMPS}"),
    "CurrentSessionAccessInfo": model(
        "Current session access info",
        "org_permissions* project_permissions",
        project_permissions=ref("ProjectAccessPermissions"),
    ),
    "GroupAccessInfo": one("Access for a group", "group_access", "GroupAccessSchema"),
    "GroupAccessSchema": model("Access for a group", f"{_GROUP} {_STAMPS}"),
    "OrgAccessPermissions": model(
        "Collection of permissions for org access",
        f"{_PERMISSIONS} group_permissions project_permissions",
        project_permissions=CRUD,
    ),
    "OrgAccessSchema": model(
        "Access for an organization",
        (
            f"{_GRANT} org_id* grantee_id* is_admin* role_permissions* group_permissions* "
            f"project_permissions* {_STAMPS}"
        ),
        project_permissions=CRUD,
    ),
    "ProjectAccessInfo": one(
        "Info on one specific project access", "project_access", "ProjectAccessSchema"
    ),
    "ProjectAccessPermissions": model(
        "Collection of permissions for project access", f"{_PERMISSIONS} group_permissions"
    ),
    "ProjectAccessSchema": model(
        "Which Project fields to include in response bodies", f"{_PROJECT} {_STAMPS}"
    ),
    "RoleAccessInfo": one("Info on one specific role access", "role_access", "RoleAccessSchema"),
    "RoleAccessSchema": model("Role access schema", f"{_ROLE} {_STAMPS}"),
    "RoleGroupAccessList": page(
        "List of group access for the target role",
        "group_access",
        "AccountGroupAccessSchema",
        "group_ids",
    ),
    "RoleOrgAccessInfo": one(
        "Organization access info for the target role", "org_access", "OrgAccessSchema"
    ),
    "RoleProjectAccessList": page(
        "List of project access for the target role",
        "project_access",
        "AccountProjectAccessSchema",
        "project_ids",
    ),
}
