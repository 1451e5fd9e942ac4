"""The SDK's response models other than access objects (see api/models.py).

What an admin is shown of a user, device, role or project is what anyone allowed to read it
is shown plus a few fields (`is_active`, ...); the fragments below hold each account and
tenant's fields once, and each model puts them in the SDK's order.
"""

from __future__ import annotations

from api.model_fields import (
    ANY,
    OBJECT,
    Schema,
    any_of,
    list_of,
    model,
    one,
    page,
    ref,
)

# Where an account's grants appear, they are its permissions in the project it acts in.
_GRANTED = {"project_permissions": ref("ProjectAccessPermissions")}
_MEMBERSHIP = "project_ids group_ids role_ids"
_STANDING = "is_project_admin is_group_admin"
_EDITED = "created_by last_updated_by last_updated_date"

_USER_NAMES = "locale* zoneinfo* username* email*"
_USER_ABOUT = (
    "id* created_date* tags* custom_attributes* restricted_custom_attributes* mfa_enabled* "
    "sms_mfa_enabled* software_mfa_enabled*"
)
_USER_PROFILE = (
    "is_delete_protected picture picture_base64 picture_content_type password_last_changed "
    "phone_number phone_number_verified nickname first_name middle_name last_name is_org_admin"
)
_USER_SEEN = (
    f"{_EDITED} last_seen preferred_mfa {_STANDING} project_permissions org_permissions "
    f"{_MEMBERSHIP}"
)

_DEVICE_ABOUT = (
    "name* locale* zoneinfo* id* created_date* tags* open_tunnels* custom_attributes* "
    "restricted_custom_attributes* iot_scopes*"
)
_DEVICE_PROFILE = (
    "is_delete_protected manufacturer product site serial_number mac_address is_org_admin "
    "picture picture_base64 picture_content_type project_id "
    f"{_STANDING} {_EDITED} api_key_last_changed mqtt_credentials_last_changed last_seen "
    f"owner_id {_MEMBERSHIP} project_permissions org_permissions"
)

_ROLE_ABOUT = (
    "id* name* description* is_delete_protected* is_org_admin* tags* created_date* "
    "restricted_custom_attributes*"
)
_ROLE_PROFILE = (
    f"{_EDITED} project_id {_STANDING} custom_attributes project_ids group_ids "
    "project_permissions org_permissions"
)

_GROUP = (
    "id* name* description* is_delete_protected* is_active* created_date* last_updated_by* "
    "tags* num_history* role_delete_protection_on_by_default* "
    "require_delete_permission_to_put_data* project_id last_updated_date created_by"
)

# The settings an org and its projects share, in the SDK's order.
_OWNERS = (
    "device_owners_have_admin_access device_owners_can_tunnel device_creators_are_owners_by_default"
)
_PROTECTION = "group_delete_protection_on_by_default role_delete_protection_on_by_default"
_DEFAULTS = (
    "last_updated_date default_locale default_from_address reset_token_expire_hours "
    "access_token_expire_hours refresh_token_expire_hours session_expire_mins pii_admin_only"
)
_LEGACY = (
    "use_legacy_data_and_files_permissions groups_require_delete_permission_to_put_data_by_default"
)
_PROJECT_ABOUT = "created_date* id* tags* ui_config* alias description"
_PROJECT_SETTINGS = f"allowed_login_fields custom_settings {_OWNERS} {_PROTECTION}"
_PROJECT = {"ui_config": ref("InterfaceConfig")}

SDK_MODELS: dict[str, Schema] = {
    "AdminDeviceInfo": one("", "device", "AdminDeviceSchema"),
    "AdminDeviceList": page("", "devices", "AdminDeviceSchema"),
    "AdminDeviceSchema": model(
        "Which Device fields to include in response bodies",
        f"{_DEVICE_ABOUT} is_active* {_DEVICE_PROFILE}",
        **_GRANTED,
    ),
    "AdminGroupInfo": one("Info on one specific group", "group", "AdminGroupSchema"),
    "AdminGroupList": page("List of groups", "groups", "AdminGroupSchema"),
    "AdminGroupSchema": model("Group schema plus admin-only fields", _GROUP),
    "AdminProjectInfo": one(
        "Info on one specific project plus admin-only fields", "project", "AdminProjectSchema"
    ),
    "AdminProjectList": page(
        "List of projects plus admin-only fields", "projects", "AdminProjectSchema"
    ),
    "AdminProjectSchema": model(
        "Project schema plus admin-only fields",
        (
            f"name* is_active* {_PROJECT_ABOUT} {_PROJECT_SETTINGS} is_delete_protected "
            f"{_DEFAULTS} {_LEGACY}"
        ),
        **_PROJECT,
    ),
    "AdminRoleInfo": one("Info on one specific role", "role", "AdminRoleSchema"),
    "AdminRoleList": page("List of roles", "roles", "AdminRoleSchema"),
    "AdminRoleSchema": model(
        "Which Role fields to include in response bodies for admins",
        f"{_ROLE_ABOUT} is_active* {_ROLE_PROFILE}",
        **_GRANTED,
    ),
    "AdminUserInfo": one("", "user", "AdminUserSchema"),
    "AdminUserList": page("", "users", "AdminUserSchema"),
    "AdminUserSchema": model(
        "Which User fields to include in response bodies",
        (
            f"{_USER_NAMES} new_password_required* has_temporary_password* {_USER_ABOUT} "
            f"is_active* {_USER_PROFILE} {_USER_SEEN}"
        ),
        **_GRANTED,
    ),
    "AnonAccountSchema": model(
        "Anonymous account base schema",
        "username* created_date* id* is_delete_protected last_updated_date",
    ),
    "AnonDeviceInfo": one("Info on one specific device", "device", "AnonAccountSchema"),
    "AnonDeviceList": page("List of devices", "devices", "AnonAccountSchema"),
    "AnonUserInfo": one("Info on one specific user", "user", "AnonAccountSchema"),
    "AnonUserList": page("List of users", "users", "AnonAccountSchema"),
    "CRUDPermissions": model(
        "Collection of CRUD permissions", "can_create can_read can_update can_delete"
    ),
    "Challenge": model("Challenge response schema", "challenge* message* session*"),
    "ClientInterfaceInfo": model(
        "Interface configuration for a given client ID",
        "allowed_login_fields* client_id* ui_config*",
        **_PROJECT,
    ),
    "DashboardConfig": model(
        "Configuration for the dashboard homepage", "widgets*", widgets=list_of(ref("WidgetInfo"))
    ),
    "DataAtPath": model(
        "List of group data",
        "paths object_count last_evaluated_key data",
        data=any_of(ref("DataSchema"), list_of(ref("DataSchema"))),
    ),
    "DataByPath": model("List of group data", "data_by_path*"),
    "DataSchema": model(
        "Group data",
        (
            "path* value* created_by* created_date* updated_by_list* updated_date_list* "
            "verified* revision* unicode_1 unicode_2 unicode_3 unicode_4 unicode_5 "
            "unicode_6 unicode_7 unicode_8 unicode_9 unicode_10 number_1 number_2"
        ),
        value=ANY,
    ),
    "DeviceInfo": one("Info on one specific device", "device", "DeviceSchema"),
    "DeviceList": page("List of devices", "devices", "DeviceSchema"),
    "DeviceSchema": model(
        "Which Device fields to include in response bodies",
        f"{_DEVICE_ABOUT} {_DEVICE_PROFILE}",
        **_GRANTED,
    ),
    "EmailTemplateInfo": one(
        "Info on one specific email template", "template", "EmailTemplateSchema"
    ),
    "EmailTemplateList": page("List of email templates", "templates", "EmailTemplateSchema"),
    "EmailTemplateSchema": model(
        "Which Template fields to include in response bodies",
        (
            "id* is_delete_protected* is_active* created_date* created_by* tags* name* "
            "subject* body_txt* body_html* locale* custom_args* for_account_recovery* "
            "for_new_users* last_updated_by last_updated_date from_address description "
            "project_id"
        ),
    ),
    "FileSchema": model(
        "File info fields to include in the response bodies",
        (
            "path* filename* created_by* created_date* revision* unicode_1 unicode_2 "
            "unicode_3 unicode_4 unicode_5 unicode_6 number_1 number_2 expires_in "
            "content_type num_parts completed_upload_id etag_by_part url size etag "
            "uploaded_date updated_by_list updated_date_list"
        ),
    ),
    "FilesAtPath": model(
        "List of file info",
        "url urls paths object_count last_evaluated_key file files",
        file=ref("FileSchema"),
        files=list_of(ref("FileSchema")),
    ),
    "FilesUrlForPath": model(
        "File pre-signed GET URL, the format used when url_only is true", "upload_id url urls"
    ),
    "GroupIdList": model("List of group IDs", "group_ids page_count object_count"),
    "GroupInfo": one("Info on one specific group", "group", "GroupSchema"),
    "GroupList": page("List of groups", "groups", "GroupSchema"),
    "GroupSchema": model("Which Group fields to include in response bodies", _GROUP),
    "HealthInfo": model("Health status of the system", "status*"),
    "InterfaceConfig": model(
        "Configuration for the user interface",
        "images primary_color use_dark_mode",
        images=ref("InterfaceImages"),
    ),
    "InterfaceImages": model(
        "Logos for the user interface", "logo_default logo_small login_background favicon"
    ),
    "Jwks": model("JSON Web Key Set", "keys*", keys=list_of(OBJECT)),
    "MfaSecretCode": model("MFA secret code", "secret_code* session"),
    "NewApiKey": model("Info on a new API key", "api_key*"),
    "NewDeviceInfo": one("Info on one specific device", "device", "NewDeviceSchema"),
    "NewDeviceSchema": model(
        "Which Device fields to include in response bodies",
        (
            "id* api_key* certificate* root_ca* public_key* private_key* broker* "
            "root_scope* owner_id"
        ),
    ),
    "NewEmailTemplateInfo": one(
        "Info on one specific email template", "template", "NewEmailTemplateSchema"
    ),
    "NewEmailTemplateSchema": model("Which Template fields to include in response bodies", "id*"),
    "NewGroupInfo": one("Info on one specific group", "group", "NewGroupSchema"),
    "NewGroupSchema": model("Which Group fields to include in response bodies", "id*"),
    "NewMqttCredentials": model(
        "Info on new MQTT credentials",
        "certificate* root_ca* public_key* private_key* broker* root_scope*",
    ),
    "NewProjectInfo": one("Info on one specific project", "project", "NewProjectSchema"),
    "NewProjectSchema": model("Which Project fields to include in response bodies", "id*"),
    "NewRoleInfo": one("Info on one specific role", "role", "NewRoleSchema"),
    "NewRoleSchema": model("Which Role fields to include in request bodies", "id*"),
    "NewTunnelInfo": one("Info on one specific tunnel", "tunnel", "NewTunnelSchema"),
    "NewTunnelSchema": model("Info on one specific tunnel", "uuid* timeout* client_access_token*"),
    "NewUserInfo": one("Info on newly created user", "user", "NewUserSchema"),
    "NewUserSchema": model("New user schema", "id*"),
    "OrgInfo": one("Information about a specific organization", "org", "OrgSchema"),
    "OrgSchema": model(
        "Organization model schema",
        (
            "name* created_date* id* alias description allowed_login_fields mfa_required "
            f"custom_settings {_OWNERS} project_delete_protection_on_by_default {_PROTECTION} "
            "user_delete_protection_on_by_default device_delete_protection_on_by_default "
            f"is_delete_protected is_active {_DEFAULTS} ui_config {_LEGACY}"
        ),
        ui_config=OBJECT,
    ),
    "ProjectIdList": model("List of project IDs", "project_ids page_count object_count"),
    "ProjectInfo": one("Info on one specific project", "project", "ProjectSchema"),
    "ProjectList": page("List of projects", "projects", "ProjectSchema"),
    "ProjectSchema": model(
        "Which Project fields to include in response bodies",
        (
            f"name* {_PROJECT_ABOUT} {_PROJECT_SETTINGS} is_delete_protected is_active "
            f"{_DEFAULTS} {_LEGACY}"
        ),
        **_PROJECT,
    ),
    "RoleIdList": model("List of role IDs", "role_ids*"),
    "RoleInfo": one("Info on one specific role", "role", "RoleSchema"),
    "RoleList": page("List of roles", "roles", "RoleSchema"),
    "RoleSchema": model(
        "Which Role fields to include in response bodies",
        f"{_ROLE_ABOUT} {_ROLE_PROFILE}",
        **_GRANTED,
    ),
    "SmsMfaAdded": model("MFA SMS token success", "message recovery_code"),
    "SoftwareMfaAdded": model("MFA software token success", "recovery_code* message session"),
    "Success": model("Success response base schema", "message"),
    "TokenInfo": model("Token info", "access_token* token_type* expires_in* refresh_token"),
    "Tunnel": model("", "uuid opened_date opened_by timeout"),
    "TunnelInfo": one("Info on one specific tunnel", "tunnel", "Tunnel"),
    "TunnelList": model("List of tunnels", "tunnels*", tunnels=list_of(ref("Tunnel"))),
    "UserInfo": one("Info on one specific user", "user", "UserSchema"),
    "UserList": page("List of users", "users", "UserSchema"),
    "UserSchema": model(
        "Which User fields to include in response bodies",
        (
            f"{_USER_NAMES} {_USER_ABOUT} {_USER_PROFILE} new_password_required "
            f"has_temporary_password {_USER_SEEN}"
        ),
        **_GRANTED,
    ),
    "VersionInfo": model("Version info for the system", "version*"),
    "WidgetInfo": model(
        "Configuration for a single widget on the dashboard",
        "order* widget_type* widget_title* config*",
    ),
}
