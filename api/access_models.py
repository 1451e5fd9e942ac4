"""The SDK's models of access objects as responses carry them (see api/models.py)."""

from __future__ import annotations

from api.model_fields import (
    OBJECT,
    Schema,
    list_of,
    model,
    ref,
)

ACCESS_MODELS: dict[str, Schema] = {
    "AccountGroupAccessList": model(
        "List of group access granted to current account",
        "group_access group_ids page_count object_count",
        group_access=list_of(ref("AccountGroupAccessSchema")),
    ),
    "AccountGroupAccessSchema": model(
        "Group access schema plus some info about the group",
        (
            "is_delete_protected* created_date* can_read* can_update* user_permissions* "
            "device_permissions* tags* group_id* grantee_id* is_admin* role_permissions* "
            "is_active* data_paths* file_paths* group_name* group_description* "
            "group_tags* last_updated_date created_by last_updated_by"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
        role_permissions=ref("CRUDPermissions"),
        data_paths=OBJECT,
        file_paths=OBJECT,
    ),
    "AccountOrgAccessInfo": model(
        "Organization access info", "org_access*", org_access=ref("OrgAccessSchema")
    ),
    "AccountProjectAccessList": model(
        "List of project access granted to current account",
        "project_access project_ids page_count object_count",
        project_access=list_of(ref("AccountProjectAccessSchema")),
    ),
    "AccountProjectAccessSchema": model(
        "Project access schema plus some info about the project",
        (
            "is_delete_protected* created_date* can_read* can_update* user_permissions* "
            "device_permissions* tags* project_id* grantee_id* is_admin* "
            "group_permissions* role_permissions* is_active* project_name* "
            "project_description* project_tags* last_updated_date created_by "
            "last_updated_by"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
        group_permissions=ref("CRUDPermissions"),
        role_permissions=ref("CRUDPermissions"),
    ),
    "AccountRoleAccessList": model(
        "List of role access granted to current account",
        "role_access*",
        role_access=list_of(ref("RoleAccessSchema")),
    ),
    "AdminAccountGroupAccessList": model(
        "List of group access granted to current account, including admin-only fields",
        "group_access page_count object_count",
        group_access=list_of(ref("AdminAccountGroupAccessSchema")),
    ),
    "AdminAccountGroupAccessSchema": model(
        "Admin group access schema plus some info about the group",
        (
            "is_delete_protected* created_date* can_read* can_update* user_permissions* "
            "device_permissions* tags* group_id* grantee_id* is_admin* role_permissions* "
            "is_active* data_paths* file_paths* last_updated_date created_by "
            "last_updated_by group_name group_description"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
        role_permissions=ref("CRUDPermissions"),
        data_paths=OBJECT,
        file_paths=OBJECT,
    ),
    "AdminAccountProjectAccessList": model(
        "List of project access granted to current account, including admin-only fields",
        "project_access page_count object_count",
        project_access=list_of(ref("AdminAccountProjectAccessSchema")),
    ),
    "AdminAccountProjectAccessSchema": model(
        "Admin project access schema plus some info about the project",
        (
            "is_delete_protected* created_date* can_read* can_update* user_permissions* "
            "device_permissions* tags* project_id* grantee_id* is_admin* "
            "group_permissions* role_permissions* is_active* last_updated_date created_by "
            "last_updated_by project_name project_description"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
        group_permissions=ref("CRUDPermissions"),
        role_permissions=ref("CRUDPermissions"),
    ),
    "AdminAccountRoleAccessList": model(
        "List of role access granted to current account, including admin-only fields",
        "role_access*",
        role_access=list_of(ref("AdminRoleAccessSchema")),
    ),
    "AdminGroupAccessInfo": model(
        "Access for a group", "group_access*", group_access=ref("AdminGroupAccessSchema")
    ),
    "AdminGroupAccessSchema": model(
        "Access for a group plus admin-only fields",
        (
            "is_delete_protected* created_date* can_read* can_update* user_permissions* "
            "device_permissions* tags* group_id* grantee_id* is_admin* role_permissions* "
            "is_active* data_paths* file_paths* last_updated_date created_by "
            "last_updated_by"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
        role_permissions=ref("CRUDPermissions"),
        data_paths=OBJECT,
        file_paths=OBJECT,
    ),
    "AdminProjectAccessInfo": model(
        "Info on one specific project access plus admin-only fields",
        "project_access*",
        project_access=ref("AdminProjectAccessSchema"),
    ),
    "AdminProjectAccessSchema": model(
        "Project access schema plus admin-only fields",
        (
            "is_delete_protected* created_date* can_read* can_update* user_permissions* "
            "device_permissions* tags* project_id* grantee_id* is_admin* "
            "group_permissions* role_permissions* is_active* last_updated_date created_by "
            "last_updated_by"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
        group_permissions=ref("CRUDPermissions"),
        role_permissions=ref("CRUDPermissions"),
    ),
    "AdminRoleAccessInfo": model(
        "Info on one specific role access", "role_access*", role_access=ref("AdminRoleAccessSchema")
    ),
    "AdminRoleAccessSchema": model(
        "Role access schema",
        (
            "is_delete_protected* created_date* can_read* can_update* user_permissions* "
            "device_permissions* tags* role_id* account_id* is_active* last_updated_date "
            "created_by last_updated_by"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
    ),
    "CurrentSessionAccessInfo": model(
        "Current session access info",
        "org_permissions* project_permissions",
        org_permissions=ref("OrgAccessPermissions"),
        project_permissions=ref("ProjectAccessPermissions"),
    ),
    "GroupAccessInfo": model(
        "Access for a group", "group_access*", group_access=ref("GroupAccessSchema")
    ),
    "GroupAccessSchema": model(
        "Access for a group",
        (
            "is_delete_protected* created_date* can_read* can_update* user_permissions* "
            "device_permissions* tags* group_id* grantee_id* is_admin* role_permissions* "
            "last_updated_date created_by last_updated_by"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
        role_permissions=ref("CRUDPermissions"),
    ),
    "OrgAccessPermissions": model(
        "Collection of permissions for org access",
        (
            "can_update can_read user_permissions device_permissions role_permissions "
            "is_admin group_permissions project_permissions"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
        role_permissions=ref("CRUDPermissions"),
        group_permissions=ref("CRUDPermissions"),
        project_permissions=ref("CRUDPermissions"),
    ),
    "OrgAccessSchema": model(
        "Access for an organization",
        (
            "is_delete_protected* created_date* can_read* can_update* user_permissions* "
            "device_permissions* tags* org_id* grantee_id* is_admin* role_permissions* "
            "group_permissions* project_permissions* last_updated_date created_by "
            "last_updated_by"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
        role_permissions=ref("CRUDPermissions"),
        group_permissions=ref("CRUDPermissions"),
        project_permissions=ref("CRUDPermissions"),
    ),
    "ProjectAccessInfo": model(
        "Info on one specific project access",
        "project_access*",
        project_access=ref("ProjectAccessSchema"),
    ),
    "ProjectAccessPermissions": model(
        "Collection of permissions for project access",
        (
            "can_update can_read user_permissions device_permissions role_permissions "
            "is_admin group_permissions"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
        role_permissions=ref("CRUDPermissions"),
        group_permissions=ref("CRUDPermissions"),
    ),
    "ProjectAccessSchema": model(
        "Which Project fields to include in response bodies",
        (
            "is_delete_protected* created_date* can_read* can_update* user_permissions* "
            "device_permissions* tags* project_id* grantee_id* is_admin* "
            "group_permissions* role_permissions* last_updated_date created_by "
            "last_updated_by"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
        group_permissions=ref("CRUDPermissions"),
        role_permissions=ref("CRUDPermissions"),
    ),
    "RoleAccessInfo": model(
        "Info on one specific role access", "role_access*", role_access=ref("RoleAccessSchema")
    ),
    "RoleAccessSchema": model(
        "Role access schema",
        (
            "is_delete_protected* created_date* can_read* can_update* user_permissions* "
            "device_permissions* tags* role_id* account_id* last_updated_date created_by "
            "last_updated_by"
        ),
        user_permissions=ref("CRUDPermissions"),
        device_permissions=ref("CRUDPermissions"),
    ),
    "RoleGroupAccessList": model(
        "List of group access for the target role",
        "group_access group_ids page_count object_count",
        group_access=list_of(ref("AccountGroupAccessSchema")),
    ),
    "RoleOrgAccessInfo": model(
        "Organization access info for the target role",
        "org_access*",
        org_access=ref("OrgAccessSchema"),
    ),
    "RoleProjectAccessList": model(
        "List of project access for the target role",
        "project_access project_ids page_count object_count",
        project_access=list_of(ref("AccountProjectAccessSchema")),
    ),
}
