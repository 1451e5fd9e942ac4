"""The user kind: what users have that devices do not (logins, passwords, phone numbers,
MFA), over the flow all accounts share (edge/accounts/__init__.py)."""

from __future__ import annotations

from edge.accounts import views
from edge.accounts.kind import Relation, Row
from storage.records import User

OPTIONAL = (
    "picture",
    "password_last_changed",
    "phone_number",
    "pending_phone_number",
    "nickname",
    "first_name",
    "middle_name",
    "last_name",
    "preferred_mfa",
    "project_id",
    "created_by",
    "last_updated_by",
)
ADMIN_ONLY = ("has_temporary_password", "new_password_required", "is_active")


class UserKind:
    name = "user"
    noun = "User"
    admin_acts = False

    def login(self, row: User) -> str:
        return row.username

    def fields(self, row: User, rel: Relation, extra: Row) -> Row:
        """The profile; the admin's view adds the password flags and `is_active`."""
        out = {**views.anonymous(self, row), **_profile(row), **views.set_values(row, OPTIONAL)}
        if rel.admin:
            out.update({name: bool(getattr(row, name)) for name in ADMIN_ONLY})
        return out


def _profile(row: User) -> Row:
    return {
        "email": row.email,
        "locale": row.locale,
        "zoneinfo": row.zoneinfo,
        "tags": row.tags,
        "custom_attributes": row.custom_attributes,
        "restricted_custom_attributes": row.restricted_custom_attributes,
        "mfa_enabled": row.sms_mfa_enabled or row.software_mfa_enabled,
        "sms_mfa_enabled": row.sms_mfa_enabled,
        "software_mfa_enabled": row.software_mfa_enabled,
        "phone_number_verified": row.phone_number_verified,
    }


USER = UserKind()
