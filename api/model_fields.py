"""The building blocks of the response models (api/models.py): types, references, the
shapes that recur (one object under a key, a page of them), and the type of every SDK field
name that has one type wherever it appears, so that a model names its fields and no more."""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]
STR: Schema = {"type": "string"}
BOOL: Schema = {"type": "boolean"}
INT: Schema = {"type": "integer"}
NUMBER: Schema = {"type": "number"}
OBJECT: Schema = {"type": "object"}
ANY: Schema = {}  # any JSON value
DATETIME: Schema = {"type": "string", "format": "date-time"}
DATE: Schema = {"type": "string", "format": "date"}
STR_LIST: Schema = {"type": "array", "items": STR}
DATETIME_LIST: Schema = {"type": "array", "items": DATETIME}
PREFIX = "#/components/schemas/"


def ref(name: str) -> Schema:
    return {"$ref": PREFIX + name}


def list_of(item: Schema) -> Schema:
    return {"type": "array", "items": item}


def any_of(*choices: Schema) -> Schema:
    return {"anyOf": list(choices)}


def one(description: str, key: str, name: str) -> Schema:
    """`{key: <name>}`, always there: how a response carries one object (`GroupInfo`)."""
    return model(description, f"{key}*", **{key: ref(name)})


def page(description: str, key: str, name: str, ids: str = "") -> Schema:
    """`{key: [<name>], page_count, object_count}`: one page of a list (`GroupList`), with
    the IDs of what it lists where the SDK's model has them (`group_ids`)."""
    fields = f"{key} {ids} page_count object_count"
    return model(description, fields, **{key: list_of(ref(name))})


def model(description: str, fields: str, **special: Schema) -> Schema:
    """A model from its field names (`name*` is required), typed by FIELDS or `special`."""
    names = [f.rstrip("*") for f in fields.split()]
    schema: Schema = {
        "type": "object",
        "properties": {n: special[n] if n in special else FIELDS[n] for n in names},
    }
    required = [f.rstrip("*") for f in fields.split() if f.endswith("*")]
    if required:
        schema["required"] = required
    if description:
        schema["description"] = description
    return schema


CRUD = ref("CRUDPermissions")

# Every field of the SDK's models that has the same type wherever it appears. The fields
# whose type depends on the model (`project_permissions`, `ui_config`, ...) are given by
# each model that has them.
FIELDS: dict[str, Schema] = {
    "access_token": STR,
    "access_token_expire_hours": INT,
    "account_id": STR,
    "alias": STR,
    "allowed_login_fields": STR_LIST,
    "api_key": STR,
    "api_key_last_changed": DATETIME,
    "body_html": STR,
    "body_txt": STR,
    "broker": STR,
    "can_create": BOOL,
    "can_delete": BOOL,
    "can_read": BOOL,
    "can_update": BOOL,
    "certificate": STR,
    "challenge": STR,
    "client_access_token": STR,
    "client_id": STR,
    "completed_upload_id": STR,
    "config": OBJECT,
    "content_type": STR,
    "created_by": STR,
    "created_date": DATETIME,
    "custom_args": STR_LIST,
    "custom_attributes": OBJECT,
    "custom_settings": OBJECT,
    "data_by_path": OBJECT,
    "data_paths": OBJECT,
    "default_from_address": STR,
    "default_locale": STR,
    "description": STR,
    "device_creators_are_owners_by_default": BOOL,
    "device_delete_protection_on_by_default": BOOL,
    "device_owners_can_tunnel": BOOL,
    "device_owners_have_admin_access": BOOL,
    "device_permissions": CRUD,
    "email": STR,
    "etag": STR,
    "etag_by_part": OBJECT,
    "expires_in": INT,
    "favicon": STR,
    "file_paths": OBJECT,
    "filename": STR,
    "first_name": STR,
    "for_account_recovery": BOOL,
    "for_new_users": BOOL,
    "from_address": STR,
    "grantee_id": STR,
    "group_delete_protection_on_by_default": BOOL,
    "group_description": STR,
    "group_id": STR,
    "group_ids": STR_LIST,
    "group_name": STR,
    "group_permissions": CRUD,
    "group_tags": STR_LIST,
    "groups_require_delete_permission_to_put_data_by_default": BOOL,
    "has_temporary_password": BOOL,
    "id": STR,
    "iot_scopes": OBJECT,
    "is_active": BOOL,
    "is_admin": BOOL,
    "is_delete_protected": BOOL,
    "is_group_admin": BOOL,
    "is_org_admin": BOOL,
    "is_project_admin": BOOL,
    "last_evaluated_key": OBJECT,
    "last_name": STR,
    "last_seen": DATETIME,
    "last_updated_by": STR,
    "last_updated_date": DATETIME,
    "locale": STR,
    "login_background": STR,
    "logo_default": STR,
    "logo_small": STR,
    "mac_address": STR,
    "manufacturer": STR,
    "message": STR,
    "mfa_enabled": BOOL,
    "mfa_required": BOOL,
    "middle_name": STR,
    "mqtt_credentials_last_changed": DATETIME,
    "name": STR,
    "new_password_required": BOOL,
    "nickname": STR,
    "num_history": INT,
    "num_parts": INT,
    "number_1": NUMBER,
    "number_2": NUMBER,
    "object_count": INT,
    "open_tunnels": list_of(ref("Tunnel")),
    "opened_by": STR,
    "opened_date": DATETIME,
    "order": INT,
    "org_id": STR,
    "org_permissions": ref("OrgAccessPermissions"),
    "owner_id": STR,
    "page_count": INT,
    "password_last_changed": DATETIME,
    "path": STR,
    "paths": STR_LIST,
    "phone_number": STR,
    "phone_number_verified": BOOL,
    "picture": STR,
    "picture_base64": STR,
    "picture_content_type": STR,
    "pii_admin_only": BOOL,
    "preferred_mfa": STR,
    "primary_color": STR,
    "private_key": STR,
    "product": STR,
    "project_delete_protection_on_by_default": BOOL,
    "project_description": STR,
    "project_id": STR,
    "project_ids": STR_LIST,
    "project_name": STR,
    "project_tags": STR_LIST,
    "public_key": STR,
    "recovery_code": STR,
    "refresh_token": STR,
    "refresh_token_expire_hours": INT,
    "require_delete_permission_to_put_data": BOOL,
    "reset_token_expire_hours": INT,
    "restricted_custom_attributes": OBJECT,
    "revision": INT,
    "role_delete_protection_on_by_default": BOOL,
    "role_id": STR,
    "role_ids": STR_LIST,
    "role_permissions": CRUD,
    "root_ca": STR,
    "root_scope": STR,
    "secret_code": STR,
    "serial_number": STR,
    "session": STR,
    "session_expire_mins": INT,
    "site": STR,
    "size": INT,
    "sms_mfa_enabled": BOOL,
    "software_mfa_enabled": BOOL,
    "status": STR,
    "subject": STR,
    "tags": STR_LIST,
    "timeout": INT,
    "token_type": STR,
    "unicode_1": STR,
    "unicode_10": STR,
    "unicode_2": STR,
    "unicode_3": STR,
    "unicode_4": STR,
    "unicode_5": STR,
    "unicode_6": STR,
    "unicode_7": STR,
    "unicode_8": STR,
    "unicode_9": STR,
    "updated_by_list": STR_LIST,
    "updated_date_list": DATETIME_LIST,
    "upload_id": STR,
    "uploaded_date": DATETIME,
    "url": STR,
    "urls": STR_LIST,
    "use_dark_mode": BOOL,
    "use_legacy_data_and_files_permissions": BOOL,
    "user_delete_protection_on_by_default": BOOL,
    "user_permissions": CRUD,
    "username": STR,
    "uuid": STR,
    "verified": BOOL,
    "version": STR,
    "widget_title": STR,
    "widget_type": STR,
    "zoneinfo": STR,
}
