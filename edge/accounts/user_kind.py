"""The user kind: what users have that devices do not (logins, passwords, phone numbers,
MFA), over the flow all accounts share (edge/accounts/__init__.py)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from dataclasses import fields as columns_of
from typing import Any

from edge.accounts import rules, views, writes
from edge.accounts.kind import Relation, Row
from edge.auth import hashing
from edge.kernel import clock, fields
from edge.kernel.errors import Conflict, ValidationError
from storage import users as store
from storage import visibility
from storage.listing import Scope
from storage.records import User
from storage.rows import Tx

MIN_USERNAME = 3
TABLE = store.LIST
PERSONAL = {"email", "phone_number", "first_name", "middle_name", "last_name", "nickname"}
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
GENERATED_PASSWORD_BYTES = 18
# A new user's columns when neither the request nor the org says otherwise.
USER_DEFAULTS: Row = {
    "password_hash": None,
    "password_last_changed": None,
    "is_active": True,
    "project_id": None,
    "phone_number": None,
    "phone_folded": None,
    "phone_number_verified": False,
    "pending_phone_number": None,
    "first_name": None,
    "middle_name": None,
    "last_name": None,
    "nickname": None,
    "locale": "en-US",
    "zoneinfo": "UTC",
    "picture": None,
    "tags": [],
    "custom_attributes": {},
    "restricted_custom_attributes": {},
    "has_temporary_password": False,
    "new_password_required": False,
    "is_delete_protected": False,
    "preferred_mfa": None,
    "sms_mfa_enabled": False,
    "software_mfa_enabled": False,
}
USER_COLUMNS = frozenset(f.name for f in columns_of(User))


class UserKind:
    name = "user"
    noun = "User"
    admin_acts = False
    listing = TABLE
    private = "personal information"

    def login(self, row: User) -> str:
        return row.username

    def visible(self, account_id: str, grantees: Sequence[str]) -> Scope:
        return visibility.users(account_id, grantees)

    def hidden(self, names: set[str]) -> list[str]:
        """Personal fields and custom attributes."""
        return sorted(n for n in names if n in PERSONAL or "." in n)

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


class AccountTaken(Conflict):
    def __init__(self, field: str) -> None:
        super().__init__(f"{field}: is already used by another user of this organization")


@dataclass(frozen=True)
class Secret:
    """The password a new user starts with, and whether they must replace it."""

    hash: str
    temporary: bool
    plain: str = field(default="", repr=False)  # temporary ones only: the invitation mails it


async def initial_password(body: dict[str, Any], username: str) -> Secret:
    """`password` (permanent), `temp_password`, or neither: a generated temporary one."""
    if "password" in body and "temp_password" in body:
        raise ValidationError("password", "give either password or temp_password, not both")
    for name in ("password", "temp_password"):
        if name in body:
            hashing.check_policy(body[name], username=username, field=name)
            temporary = name == "temp_password"
            plain = body[name] if temporary else ""
            return Secret(await hashing.hash(body[name]), temporary, plain)
    generated = secrets.token_urlsafe(GENERATED_PASSWORD_BYTES)
    return Secret(await hashing.hash(generated), temporary=True, plain=generated)


def new_user(org_id: str, actor: str, values: Row) -> User:
    """A User from the given columns, with the defaults above and fresh stamps."""
    row = writes.new_row(org_id, actor, USER_DEFAULTS, values)
    row.setdefault("username", row["email"])
    row["username_folded"] = row["username"].casefold()
    row.setdefault("email_folded", row["email"].casefold())
    return User(**{name: row[name] for name in USER_COLUMNS})


async def first_admin(org_id: str, actor: str, admin: dict[str, str]) -> User:
    """An organization's first admin, from the `admin` of its create body: the e-mail is
    the login, the password must pass the policy (edge/tenancy/orgs.py takes this)."""
    email = fields.email("admin_email", admin.get("email"))
    hashing.check_policy(admin.get("password", ""), username=email, field="admin_password")
    values = {
        "username": email,
        "email": email,
        "password_hash": await hashing.hash(admin["password"]),
        "password_last_changed": clock.now_iso(),
    }
    return new_user(org_id, actor, values)


def with_secret(
    org_id: str, project_id: str | None, actor: str, columns: Row, defaults: Row, secret: Secret
) -> User:
    """A new user of a create request: its columns over the org's defaults, and its password."""
    values: Row = {
        "project_id": project_id,
        "password_hash": secret.hash,
        "password_last_changed": clock.now_iso(),
        "has_temporary_password": secret.temporary,
        "new_password_required": secret.temporary,
        **defaults,
        **columns,
    }
    return new_user(org_id, actor, values)


def logins(columns: Row) -> dict[str, str]:
    """The login values a write sets, folded, for the uniqueness check."""
    out = {}
    for name, column in (("email", "email_folded"), ("username", "username_folded")):
        if column in columns:
            out[name] = str(columns[column])
    if columns.get("phone_folded"):
        out["phone_number"] = str(columns["phone_folded"])
    return out


def check_unique(conn: Tx, org_id: str, user_id: str, columns: Row) -> None:
    taken = store.clash(conn, org_id, user_id, logins(columns))
    if taken is not None:
        raise AccountTaken(taken)
