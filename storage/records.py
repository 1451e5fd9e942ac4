"""Typed records: what `storage/` hands back for the tenant model.

One frozen dataclass per table, its fields named and ordered like the table's columns.
JSON columns arrive decoded (lists and dicts), flags as `bool`; services never see a
cursor, a connection or a JSON string. `Codec` turns a row tuple into a record and a
record (or a dict of changes) back into column values, and builds the column list of a
SELECT once, so a query reads exactly the columns a record holds.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

R = TypeVar("R")
JsonObject = dict[str, Any]


class Record:
    """Base of every record. `record["name"]` reads a field, for code that still reads
    rows by key (the auth flows); new code uses attributes."""

    __slots__ = ()

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        return getattr(self, name, default)


class Codec(Generic[R]):
    """Row tuples to records and back, for one record class and the table it lives in."""

    def __init__(self, cls: type[R], table: str) -> None:
        hints = typing.get_type_hints(cls)
        self.cls = cls
        self.table = table
        self.columns = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
        self.select = ", ".join(f"{table}.{name}" for name in self.columns)
        self.json = frozenset(n for n in self.columns if _is_json(hints[n]))
        self.bools = frozenset(n for n in self.columns if hints[n] is bool)
        self._json_at = tuple(i for i, n in enumerate(self.columns) if n in self.json)
        self._bool_at = tuple(i for i, n in enumerate(self.columns) if n in self.bools)

    def decode(self, values: tuple[Any, ...]) -> R:
        out = list(values)
        for i in self._json_at:
            out[i] = _json_value(out[i])
        for i in self._bool_at:
            out[i] = bool(out[i])
        return self.cls(*out)

    def encode(self, record: R) -> dict[str, Any]:
        """Every column of a record, ready for INSERT: as `changes` would give them, in one
        pass over the columns (no intermediate dict, no check for columns the record
        cannot lack); every write encodes a record or two."""
        out: dict[str, Any] = {}
        for name in self.columns:
            value = getattr(record, name)
            if value is not None and name in self.json:
                value = json.dumps(value)
            elif name in self.bools:
                value = int(bool(value))
            out[name] = value
        return out

    def changes(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Named columns, ready for UPDATE: JSON columns dumped, flags as integers."""
        unknown = set(values) - set(self.columns)
        if unknown:
            raise KeyError(f"{self.table} has no column {sorted(unknown)[0]}")
        out: dict[str, Any] = {}
        for name, value in values.items():
            if name in self.json and value is not None:
                out[name] = json.dumps(value)
            elif name in self.bools:
                out[name] = int(bool(value))
            else:
                out[name] = value
        return out


def _json_value(text: str | None) -> Any:
    """A JSON column's value. Most rows hold `[]` or `{}`: those skip the parser, which
    costs more than the rest of decoding a row."""
    if text is None:
        return None
    if text == "[]":
        return []
    if text == "{}":
        return {}
    return json.loads(text)


def _is_json(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (dict, list):
        return True
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        return any(_is_json(arg) for arg in typing.get_args(hint))
    return False


@dataclass(frozen=True, slots=True)
class Org(Record):
    id: str
    name: str
    name_folded: str
    alias: str | None
    description: str
    tags: list[str]
    is_active: bool
    is_delete_protected: bool
    settings: JsonObject
    created_date: str
    created_by: str | None
    last_updated_date: str
    last_updated_by: str | None


@dataclass(frozen=True, slots=True)
class Project(Record):
    id: str
    org_id: str
    name: str
    name_folded: str
    alias: str | None
    description: str
    tags: list[str]
    is_active: bool
    is_delete_protected: bool
    settings: JsonObject
    created_date: str
    created_by: str | None
    last_updated_date: str
    last_updated_by: str | None


@dataclass(frozen=True, slots=True)
class Group(Record):
    id: str
    org_id: str
    project_id: str | None
    name: str
    name_folded: str
    description: str
    tags: list[str]
    is_active: bool
    is_delete_protected: bool
    require_delete_permission_to_put_data: bool
    role_delete_protection_on_by_default: bool
    num_history: int
    created_date: str
    created_by: str | None
    last_updated_date: str
    last_updated_by: str | None


@dataclass(frozen=True, slots=True)
class Role(Record):
    id: str
    org_id: str
    project_id: str | None
    name: str
    name_folded: str
    description: str
    tags: list[str]
    is_active: bool
    is_delete_protected: bool
    custom_attributes: JsonObject
    restricted_custom_attributes: JsonObject
    created_date: str
    created_by: str | None
    last_updated_date: str
    last_updated_by: str | None


@dataclass(frozen=True, slots=True)
class User(Record):
    id: str
    org_id: str
    username: str
    username_folded: str
    email: str
    email_folded: str
    password_hash: str | None = field(repr=False)
    password_last_changed: str | None
    is_active: bool
    created_date: str
    created_by: str | None
    last_updated_date: str
    last_updated_by: str | None
    project_id: str | None
    phone_number: str | None
    phone_folded: str | None
    phone_number_verified: bool
    pending_phone_number: str | None
    first_name: str | None
    middle_name: str | None
    last_name: str | None
    nickname: str | None
    locale: str
    zoneinfo: str
    picture: str | None
    tags: list[str]
    custom_attributes: JsonObject
    restricted_custom_attributes: JsonObject
    has_temporary_password: bool
    new_password_required: bool
    is_delete_protected: bool
    preferred_mfa: str | None
    sms_mfa_enabled: bool
    software_mfa_enabled: bool


@dataclass(frozen=True, slots=True)
class Access(Record):
    """An access object: `grantee_id` (a user, device or role) holds access to `target_id`
    (the org, a project, a group or a role). `permissions` holds the CRUD blocks by name
    (`user_permissions`: {can_create, ...}); `data_paths` / `file_paths` a group's paths."""

    id: str
    kind: str
    target_id: str
    grantee_id: str
    grantee_kind: str
    org_id: str
    is_admin: bool
    can_read: bool
    can_update: bool
    permissions: dict[str, dict[str, bool]]
    data_paths: dict[str, dict[str, bool]]
    file_paths: dict[str, dict[str, bool]]
    tags: list[str]
    is_active: bool
    is_delete_protected: bool
    created_date: str
    created_by: str | None
    last_updated_date: str
    last_updated_by: str | None

    def replace(self, **changes: Any) -> Access:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, slots=True)
class Device(Record):
    """A device: an account that signs in with an API key or a client certificate.
    `iot_scopes` maps each scope (with its leading '/') to {can_publish, can_subscribe}."""

    id: str
    org_id: str
    project_id: str | None
    name: str
    name_folded: str
    owner_id: str | None
    manufacturer: str | None
    product: str | None
    site: str | None
    serial_number: str | None
    mac_address: str | None
    locale: str
    zoneinfo: str
    picture: str | None
    tags: list[str]
    custom_attributes: JsonObject
    restricted_custom_attributes: JsonObject
    iot_scopes: dict[str, dict[str, bool]]
    is_active: bool
    is_delete_protected: bool
    api_key_hash: str | None = field(repr=False)
    api_key_last_changed: str
    mqtt_credentials_last_changed: str
    created_date: str
    created_by: str | None
    last_updated_date: str
    last_updated_by: str | None


@dataclass(frozen=True, slots=True)
class DeviceCertificate(Record):
    """A client certificate the site CA issued to a device; ended ones stay, refused.
    `status`: active, superseded (a reset or renewal issued the next) or revoked;
    `revoked_date` is when either ended it (a row restored from a trash snapshot taken
    before migration 0029 has it without the status, and is ended all the same)."""

    serial: str
    device_id: str
    issued_date: str
    not_after: str
    revoked_date: str | None
    fingerprint: str = ""
    not_before: str = ""
    status: str = "active"
    reason: str | None = None

    @property
    def in_force(self) -> bool:
        return self.status == "active" and self.revoked_date is None


ORGS = Codec(Org, "orgs")
PROJECTS = Codec(Project, "projects")
GROUPS = Codec(Group, "groups")
ROLES = Codec(Role, "roles")
USERS = Codec(User, "users")
ACCESS = Codec(Access, "access")


@dataclass(frozen=True, slots=True)
class Tunnel(Record):
    """A device tunnel. The tokens are kept only as their SHA-256; `closed_date` is set
    when someone closes it (an expired tunnel is simply past `expires_date`)."""

    id: str
    org_id: str
    device_id: str
    services: list[str]
    timeout_seconds: int
    client_token_hash: str = field(repr=False)
    device_token_hash: str = field(repr=False)
    sent_to: str | None
    opened_date: str
    opened_by: str
    expires_date: str
    closed_date: str | None
    closed_by: str | None


@dataclass(frozen=True, slots=True)
class Twin(Record):
    """A device's twin (docs/twins.md): `metadata` holds `{"desired": ..., "reported": ...}`
    in the shape of the two sections, each leaf the time it was last set."""

    device_id: str
    desired: JsonObject
    reported: JsonObject
    metadata: JsonObject
    version: int
    updated_date: str


DEVICES = Codec(Device, "devices")
DEVICE_CERTIFICATES = Codec(DeviceCertificate, "device_certificates")
TUNNELS = Codec(Tunnel, "tunnels")
TWINS = Codec(Twin, "device_twins")


@dataclass(frozen=True, slots=True)
class Claim(Record):
    """A provisioning claim (docs/provisioning.md): who may enroll with it, how often and
    until when, and the `template` a device enrolled with it gets (`groups`, `tags`,
    `iot_scopes`). The secret itself is never stored, only its hash."""

    id: str
    org_id: str
    project_id: str | None
    name: str
    secret_hash: str = field(repr=False)
    template: JsonObject
    max_uses: int
    uses: int
    expires_date: str
    last_used_date: str | None
    revoked_date: str | None
    revoked_by: str | None
    created_date: str
    created_by: str | None


CLAIMS = Codec(Claim, "provisioning_claims")


@dataclass(frozen=True, slots=True)
class FileEntry(Record):
    """A file of a group: what is known of its bytes (size, S3 ETag without quotes, content
    type), with the index fields. The bytes are in its `FileBlob`s (storage/blobs.py)."""

    id: str
    org_id: str
    group_id: str
    path: str
    filename: str
    size: int
    etag: str
    content_type: str | None
    unicode_1: str | None
    unicode_2: str | None
    unicode_3: str | None
    unicode_4: str | None
    unicode_5: str | None
    unicode_6: str | None
    number_1: float | None
    number_2: float | None
    revision: int
    uploaded_date: str
    updated_by_list: list[str]
    updated_date_list: list[str]
    created_date: str
    created_by: str | None
    last_updated_date: str
    last_updated_by: str | None


@dataclass(frozen=True, slots=True)
class FileBlob(Record):
    """One blob of a file's bytes: the whole file, or one part of a multipart file (`seq`)."""

    blob: str
    file_id: str
    seq: int
    size: int


@dataclass(frozen=True, slots=True)
class FileUpload(Record):
    """An upload session: single-part (`num_parts` None) or multipart; `rights` are the
    permissions checked when its URLs were issued, `fields` what the file gets on completion."""

    id: str
    org_id: str
    group_id: str
    path: str
    num_parts: int | None
    rights: list[str]
    fields: JsonObject
    created_by: str | None
    created_date: str
    expires: str


@dataclass(frozen=True, slots=True)
class UploadPart(Record):
    upload_id: str
    part_number: int
    file: str
    size: int
    md5: str


FILES = Codec(FileEntry, "files")
FILE_BLOBS = Codec(FileBlob, "file_blobs")
FILE_UPLOADS = Codec(FileUpload, "file_uploads")
UPLOAD_PARTS = Codec(UploadPart, "file_upload_parts")


@dataclass(frozen=True, slots=True)
class BillingEntry(Record):
    id: str
    org_id: str
    kind: str
    points: int
    meter: str | None
    quantity: int | None
    day: str | None
    description: str
    tags: list[str]
    created_date: str
    created_by: str | None
    last_updated_date: str
    last_updated_by: str | None


BILLING_ENTRIES = Codec(BillingEntry, "billing_entries")


@dataclass(frozen=True, slots=True)
class AuditEvent(Record):
    id: str
    created_date: str
    org_id: str | None
    action: str
    actor_kind: str
    actor_id: str | None
    target_kind: str | None
    target_id: str | None
    client: str | None
    request_id: str | None
    details: dict[str, Any]
    actor_name: str | None = None  # as it was when the event was written (migration 0021)
    target_name: str | None = None


AUDIT_EVENTS = Codec(AuditEvent, "audit_events")
