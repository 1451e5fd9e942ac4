"""The user kind: what users have that devices do not (logins, passwords, phone numbers,
MFA), over the flow all accounts share (edge/accounts/__init__.py)."""

from __future__ import annotations

from typing import Any

from edge import fields
from edge.accounts import rules, views
from edge.accounts.kind import Relation, Row
from edge.errors import ValidationError
from storage.records import User

MIN_USERNAME = 3
PROFILE_TEXT = ("first_name", "middle_name", "last_name", "nickname")

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


def username(field: str, value: Any) -> str:
    """A username: not shaped like a phone number, since sign-in reads such a login as a
    phone number, and one login value must never name two accounts (docs/users-and-account.md)."""
    name = fields.identifier(field, value)
    if len(name) < MIN_USERNAME:
        raise ValidationError(field, f"must be at least {MIN_USERNAME} characters")
    if fields.looks_like_phone(name):
        raise ValidationError(
            field, "must not be a phone number: phone numbers sign in as phone_number"
        )
    return name


def columns(body: dict[str, Any]) -> dict[str, Any]:
    """The stored columns for every user field present in the body: the logins and the
    names, then the fields every account has."""
    out: dict[str, Any] = {}
    if "email" in body:
        out["email"] = fields.email("email", body["email"])
        out["email_folded"] = out["email"].casefold()
    if "username" in body:
        out["username"] = username("username", body["username"])
        out["username_folded"] = out["username"].casefold()
    if "phone_number" in body:
        out["phone_number"] = out["phone_folded"] = fields.phone(
            "phone_number", body["phone_number"]
        )
    for name in PROFILE_TEXT:  # names that identify the person: no control characters
        if name in body:
            out[name] = fields.optional_text(name, body[name])
            if out[name] is not None:
                fields.plain(name, out[name])
    out.update(rules.columns(body))
    return out


USER = UserKind()
