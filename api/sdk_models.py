"""The SDK's response models other than access objects (see api/models.py)."""

from __future__ import annotations

from api.model_fields import (
    ANY,
    OBJECT,
    Schema,
    any_of,
    list_of,
    model,
    ref,
)

SDK_MODELS: dict[str, Schema] = {
    "AdminDeviceInfo": model("", "device*", device=ref("AdminDeviceSchema")),
    "AdminDeviceList": model(
        "", "devices page_count object_count", devices=list_of(ref("AdminDeviceSchema"))
    ),
    "AdminDeviceSchema": model(
        "Which Device fields to include in response bodies",
        (
            "name* locale* zoneinfo* id* created_date* tags* open_tunnels* "
            "custom_attributes* restricted_custom_attributes* iot_scopes* is_active* "
            "is_delete_protected manufacturer product site serial_number mac_address "
            "is_org_admin picture picture_base64 picture_content_type project_id "
            "is_project_admin is_group_admin created_by last_updated_by last_updated_date "
            "api_key_last_changed mqtt_credentials_last_changed last_seen owner_id "
            "project_ids group_ids role_ids project_permissions org_permissions"
        ),
        open_tunnels=list_of(ref("Tunnel")),
        custom_attributes=OBJECT,
        restricted_custom_attributes=OBJECT,
        iot_scopes=OBJECT,
        project_permissions=ref("ProjectAccessPermissions"),
        org_permissions=ref("OrgAccessPermissions"),
    ),
    "AdminGroupInfo": model("Info on one specific group", "group*", group=ref("AdminGroupSchema")),
    "AdminGroupList": model(
        "List of groups", "groups page_count object_count", groups=list_of(ref("AdminGroupSchema"))
    ),
    "AdminGroupSchema": model(
        "Group schema plus admin-only fields",
        (
            "id* name* description* is_delete_protected* is_active* created_date* "
            "last_updated_by* tags* num_history* role_delete_protection_on_by_default* "
            "require_delete_permission_to_put_data* project_id last_updated_date "
            "created_by"
        ),
    ),
    "AdminProjectInfo": model(
        "Info on one specific project plus admin-only fields",
        "project*",
        project=ref("AdminProjectSchema"),
    ),
    "AdminProjectList": model(
        "List of projects plus admin-only fields",
        "projects page_count object_count",
        projects=list_of(ref("AdminProjectSchema")),
    ),
    "AdminProjectSchema": model(
        "Project schema plus admin-only fields",
        (
            "name* is_active* created_date* id* tags* ui_config* alias description "
            "allowed_login_fields custom_settings device_owners_have_admin_access "
            "device_owners_can_tunnel device_creators_are_owners_by_default "
            "group_delete_protection_on_by_default role_delete_protection_on_by_default "
            "is_delete_protected last_updated_date default_locale default_from_address "
            "reset_token_expire_hours access_token_expire_hours "
            "refresh_token_expire_hours session_expire_mins pii_admin_only "
            "use_legacy_data_and_files_permissions "
            "groups_require_delete_permission_to_put_data_by_default"
        ),
        ui_config=ref("InterfaceConfig"),
        custom_settings=OBJECT,
    ),
    "AdminRoleInfo": model("Info on one specific role", "role*", role=ref("AdminRoleSchema")),
    "AdminRoleList": model(
        "List of roles", "roles page_count object_count", roles=list_of(ref("AdminRoleSchema"))
    ),
    "AdminRoleSchema": model(
        "Which Role fields to include in response bodies for admins",
        (
            "id* name* description* is_delete_protected* is_org_admin* tags* "
            "created_date* restricted_custom_attributes* is_active* created_by "
            "last_updated_by last_updated_date project_id is_project_admin is_group_admin "
            "custom_attributes project_ids group_ids project_permissions org_permissions"
        ),
        restricted_custom_attributes=OBJECT,
        custom_attributes=OBJECT,
        project_permissions=ref("ProjectAccessPermissions"),
        org_permissions=ref("OrgAccessPermissions"),
    ),
    "AdminUserInfo": model("", "user*", user=ref("AdminUserSchema")),
    "AdminUserList": model(
        "", "users page_count object_count", users=list_of(ref("AdminUserSchema"))
    ),
    "AdminUserSchema": model(
        "Which User fields to include in response bodies",
        (
            "locale* zoneinfo* username* email* new_password_required* "
            "has_temporary_password* id* created_date* tags* custom_attributes* "
            "restricted_custom_attributes* mfa_enabled* sms_mfa_enabled* "
            "software_mfa_enabled* is_active* is_delete_protected picture picture_base64 "
            "picture_content_type password_last_changed phone_number "
            "phone_number_verified nickname first_name middle_name last_name is_org_admin "
            "created_by last_updated_by last_updated_date last_seen preferred_mfa "
            "is_project_admin is_group_admin project_permissions org_permissions "
            "project_ids group_ids role_ids"
        ),
        custom_attributes=OBJECT,
        restricted_custom_attributes=OBJECT,
        project_permissions=ref("ProjectAccessPermissions"),
        org_permissions=ref("OrgAccessPermissions"),
    ),
    "AnonAccountSchema": model(
        "Anonymous account base schema",
        "username* created_date* id* is_delete_protected last_updated_date",
    ),
    "AnonDeviceInfo": model(
        "Info on one specific device", "device*", device=ref("AnonAccountSchema")
    ),
    "AnonDeviceList": model(
        "List of devices",
        "devices page_count object_count",
        devices=list_of(ref("AnonAccountSchema")),
    ),
    "AnonUserInfo": model("Info on one specific user", "user*", user=ref("AnonAccountSchema")),
    "AnonUserList": model(
        "List of users", "users page_count object_count", users=list_of(ref("AnonAccountSchema"))
    ),
    "CRUDPermissions": model(
        "Collection of CRUD permissions", "can_create can_read can_update can_delete"
    ),
    "Challenge": model("Challenge response schema", "challenge* message* session*"),
    "ClientInterfaceInfo": model(
        "Interface configuration for a given client ID",
        "allowed_login_fields* client_id* ui_config*",
        ui_config=ref("InterfaceConfig"),
    ),
    "DashboardConfig": model(
        "Configuration for the dashboard homepage", "widgets*", widgets=list_of(ref("WidgetInfo"))
    ),
    "DataAtPath": model(
        "List of group data",
        "paths object_count last_evaluated_key data",
        last_evaluated_key=OBJECT,
        data=any_of(ref("DataSchema"), list_of(ref("DataSchema"))),
    ),
    "DataByPath": model("List of group data", "data_by_path*", data_by_path=OBJECT),
    "DataSchema": model(
        "Group data",
        (
            "path* value* created_by* created_date* updated_by_list* updated_date_list* "
            "verified* revision* unicode_1 unicode_2 unicode_3 unicode_4 unicode_5 "
            "unicode_6 unicode_7 unicode_8 unicode_9 unicode_10 number_1 number_2"
        ),
        value=ANY,
    ),
    "DeviceInfo": model("Info on one specific device", "device*", device=ref("DeviceSchema")),
    "DeviceList": model(
        "List of devices", "devices page_count object_count", devices=list_of(ref("DeviceSchema"))
    ),
    "DeviceSchema": model(
        "Which Device fields to include in response bodies",
        (
            "name* locale* zoneinfo* id* created_date* tags* open_tunnels* "
            "custom_attributes* restricted_custom_attributes* iot_scopes* "
            "is_delete_protected manufacturer product site serial_number mac_address "
            "is_org_admin picture picture_base64 picture_content_type project_id "
            "is_project_admin is_group_admin created_by last_updated_by last_updated_date "
            "api_key_last_changed mqtt_credentials_last_changed last_seen owner_id "
            "project_ids group_ids role_ids project_permissions org_permissions"
        ),
        open_tunnels=list_of(ref("Tunnel")),
        custom_attributes=OBJECT,
        restricted_custom_attributes=OBJECT,
        iot_scopes=OBJECT,
        project_permissions=ref("ProjectAccessPermissions"),
        org_permissions=ref("OrgAccessPermissions"),
    ),
    "EmailTemplateInfo": model(
        "Info on one specific email template", "template*", template=ref("EmailTemplateSchema")
    ),
    "EmailTemplateList": model(
        "List of email templates",
        "templates page_count object_count",
        templates=list_of(ref("EmailTemplateSchema")),
    ),
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
        etag_by_part=OBJECT,
    ),
    "FilesAtPath": model(
        "List of file info",
        "url urls paths object_count last_evaluated_key file files",
        last_evaluated_key=OBJECT,
        file=ref("FileSchema"),
        files=list_of(ref("FileSchema")),
    ),
    "FilesUrlForPath": model(
        "File pre-signed GET URL, the format used when url_only is true", "upload_id url urls"
    ),
    "GroupIdList": model("List of group IDs", "group_ids page_count object_count"),
    "GroupInfo": model("Info on one specific group", "group*", group=ref("GroupSchema")),
    "GroupList": model(
        "List of groups", "groups page_count object_count", groups=list_of(ref("GroupSchema"))
    ),
    "GroupSchema": model(
        "Which Group fields to include in response bodies",
        (
            "id* name* description* is_delete_protected* is_active* created_date* "
            "last_updated_by* tags* num_history* role_delete_protection_on_by_default* "
            "require_delete_permission_to_put_data* project_id last_updated_date "
            "created_by"
        ),
    ),
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
    "NewDeviceInfo": model("Info on one specific device", "device*", device=ref("NewDeviceSchema")),
    "NewDeviceSchema": model(
        "Which Device fields to include in response bodies",
        (
            "id* api_key* certificate* root_ca* public_key* private_key* broker* "
            "root_scope* owner_id"
        ),
    ),
    "NewEmailTemplateInfo": model(
        "Info on one specific email template", "template*", template=ref("NewEmailTemplateSchema")
    ),
    "NewEmailTemplateSchema": model("Which Template fields to include in response bodies", "id*"),
    "NewGroupInfo": model("Info on one specific group", "group*", group=ref("NewGroupSchema")),
    "NewGroupSchema": model("Which Group fields to include in response bodies", "id*"),
    "NewMqttCredentials": model(
        "Info on new MQTT credentials",
        "certificate* root_ca* public_key* private_key* broker* root_scope*",
    ),
    "NewProjectInfo": model(
        "Info on one specific project", "project*", project=ref("NewProjectSchema")
    ),
    "NewProjectSchema": model("Which Project fields to include in response bodies", "id*"),
    "NewRoleInfo": model("Info on one specific role", "role*", role=ref("NewRoleSchema")),
    "NewRoleSchema": model("Which Role fields to include in request bodies", "id*"),
    "NewTunnelInfo": model("Info on one specific tunnel", "tunnel*", tunnel=ref("NewTunnelSchema")),
    "NewTunnelSchema": model("Info on one specific tunnel", "uuid* timeout* client_access_token*"),
    "NewUserInfo": model("Info on newly created user", "user*", user=ref("NewUserSchema")),
    "NewUserSchema": model("New user schema", "id*"),
    "OrgInfo": model("Information about a specific organization", "org*", org=ref("OrgSchema")),
    "OrgSchema": model(
        "Organization model schema",
        (
            "name* created_date* id* alias description allowed_login_fields mfa_required "
            "custom_settings device_owners_have_admin_access device_owners_can_tunnel "
            "device_creators_are_owners_by_default "
            "project_delete_protection_on_by_default "
            "group_delete_protection_on_by_default role_delete_protection_on_by_default "
            "user_delete_protection_on_by_default device_delete_protection_on_by_default "
            "is_delete_protected is_active last_updated_date default_locale "
            "default_from_address reset_token_expire_hours access_token_expire_hours "
            "refresh_token_expire_hours session_expire_mins pii_admin_only ui_config "
            "use_legacy_data_and_files_permissions "
            "groups_require_delete_permission_to_put_data_by_default"
        ),
        custom_settings=OBJECT,
        ui_config=OBJECT,
    ),
    "ProjectIdList": model("List of project IDs", "project_ids page_count object_count"),
    "ProjectInfo": model("Info on one specific project", "project*", project=ref("ProjectSchema")),
    "ProjectList": model(
        "List of projects",
        "projects page_count object_count",
        projects=list_of(ref("ProjectSchema")),
    ),
    "ProjectSchema": model(
        "Which Project fields to include in response bodies",
        (
            "name* created_date* id* tags* ui_config* alias description "
            "allowed_login_fields custom_settings device_owners_have_admin_access "
            "device_owners_can_tunnel device_creators_are_owners_by_default "
            "group_delete_protection_on_by_default role_delete_protection_on_by_default "
            "is_delete_protected is_active last_updated_date default_locale "
            "default_from_address reset_token_expire_hours access_token_expire_hours "
            "refresh_token_expire_hours session_expire_mins pii_admin_only "
            "use_legacy_data_and_files_permissions "
            "groups_require_delete_permission_to_put_data_by_default"
        ),
        ui_config=ref("InterfaceConfig"),
        custom_settings=OBJECT,
    ),
    "RoleIdList": model("List of role IDs", "role_ids*"),
    "RoleInfo": model("Info on one specific role", "role*", role=ref("RoleSchema")),
    "RoleList": model(
        "List of roles", "roles page_count object_count", roles=list_of(ref("RoleSchema"))
    ),
    "RoleSchema": model(
        "Which Role fields to include in response bodies",
        (
            "id* name* description* is_delete_protected* is_org_admin* tags* "
            "created_date* restricted_custom_attributes* created_by last_updated_by "
            "last_updated_date project_id is_project_admin is_group_admin "
            "custom_attributes project_ids group_ids project_permissions org_permissions"
        ),
        restricted_custom_attributes=OBJECT,
        custom_attributes=OBJECT,
        project_permissions=ref("ProjectAccessPermissions"),
        org_permissions=ref("OrgAccessPermissions"),
    ),
    "SmsMfaAdded": model("MFA SMS token success", "message recovery_code"),
    "SoftwareMfaAdded": model("MFA software token success", "recovery_code* message session"),
    "Success": model("Success response base schema", "message"),
    "TokenInfo": model("Token info", "access_token* token_type* expires_in* refresh_token"),
    "Tunnel": model("", "uuid opened_date opened_by timeout"),
    "TunnelInfo": model("Info on one specific tunnel", "tunnel*", tunnel=ref("Tunnel")),
    "TunnelList": model("List of tunnels", "tunnels*", tunnels=list_of(ref("Tunnel"))),
    "UserInfo": model("Info on one specific user", "user*", user=ref("UserSchema")),
    "UserList": model(
        "List of users", "users page_count object_count", users=list_of(ref("UserSchema"))
    ),
    "UserSchema": model(
        "Which User fields to include in response bodies",
        (
            "locale* zoneinfo* username* email* id* created_date* tags* "
            "custom_attributes* restricted_custom_attributes* mfa_enabled* "
            "sms_mfa_enabled* software_mfa_enabled* is_delete_protected picture "
            "picture_base64 picture_content_type password_last_changed phone_number "
            "phone_number_verified nickname first_name middle_name last_name is_org_admin "
            "new_password_required has_temporary_password created_by last_updated_by "
            "last_updated_date last_seen preferred_mfa is_project_admin is_group_admin "
            "project_permissions org_permissions project_ids group_ids role_ids"
        ),
        custom_attributes=OBJECT,
        restricted_custom_attributes=OBJECT,
        project_permissions=ref("ProjectAccessPermissions"),
        org_permissions=ref("OrgAccessPermissions"),
    ),
    "VersionInfo": model("Version info for the system", "version*"),
    "WidgetInfo": model(
        "Configuration for a single widget on the dashboard",
        "order* widget_type* widget_title* config*",
        config=OBJECT,
    ),
}
