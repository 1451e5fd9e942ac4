"""Accounts inside an organization: the users table, its list spec, and who holds what."""

from __future__ import annotations

from collections.abc import Sequence

from storage import accounts
from storage.listing import Field, Table
from storage.records import USERS, User
from storage.rows import Row, Tx, insert_record, many, one, record, scalar, update_record

IS_ORG_ADMIN = accounts.is_org_admin("users")
LAST_SEEN = "(SELECT max(s.created_date) FROM sessions s WHERE s.account_id = users.id)"
# One user's last sign-in. The unary + on the parameter changes nothing but the cost: with a
# bare parameter, SQLite's min/max optimization asks for the bound value, which makes it
# prepare the statement afresh on every run (10 us against 3, measured).
LAST_SEEN_ONE = "SELECT max(created_date) FROM sessions WHERE account_id = +?"


def epoch(conn: Tx) -> int:
    """Bumped by triggers (migration 0018) whenever a user row, a picture or a session
    changes: what the services keep about a user is stale once it moves."""
    return int(scalar(conn, "SELECT value FROM users_epoch WHERE id = 1") or 0)


def create(conn: Tx, value: User) -> None:
    insert_record(conn, USERS, value)


def get(conn: Tx, user_id: str) -> User | None:
    return record(conn, USERS, "id = ?", (user_id,))


def find_by_login(conn: Tx, org_id: str, folded: str) -> User | None:
    return record(
        conn, USERS, "org_id = ?1 AND (username_folded = ?2 OR email_folded = ?2)", (org_id, folded)
    )


def find_by_phone(conn: Tx, org_id: str, phone: str) -> User | None:
    """The user with this normalized phone number in the org, if any."""
    return record(conn, USERS, "org_id = ? AND phone_folded = ?", (org_id, phone))


def taken(conn: Tx, org_id: str, username_folded: str, email_folded: str) -> str | None:
    """Which of username or e-mail already belongs to someone in the org, if either."""
    row = one(
        conn,
        "SELECT username_folded, email_folded FROM users WHERE org_id = ?1"
        " AND (username_folded = ?2 OR email_folded = ?3)",
        (org_id, username_folded, email_folded),
    )
    if row is None:
        return None
    return "username" if row["username_folded"] == username_folded else "email"


def clash(
    conn: Tx,
    org_id: str,
    user_id: str,
    logins: dict[str, str],
) -> str | None:
    """The first login field ('username', 'email', 'phone_number') another user already uses.

    A username may not equal someone's e-mail nor the reverse: sign-in looks both up with
    one value, so either would make that value name two accounts.
    """
    for name, value in logins.items():
        if name == "phone_number":
            sql = "SELECT 1 FROM users WHERE org_id = ?1 AND id != ?2 AND phone_folded = ?3"
        else:
            sql = (
                "SELECT 1 FROM users WHERE org_id = ?1 AND id != ?2"
                " AND (username_folded = ?3 OR email_folded = ?3)"
            )
        if one(conn, sql, (org_id, user_id, value)) is not None:
            return name
    return None


def login_clashes(conn: Tx) -> list[Row]:
    """Pairs of users of one org whose login values collide across fields (a username
    equal to another's e-mail), and usernames shaped like phone numbers (for `edge check`:
    rows written before the rule)."""
    crossed = many(
        conn,
        "SELECT a.org_id, a.id AS first, b.id AS second, a.username_folded AS value"
        " FROM users a JOIN users b ON b.org_id = a.org_id AND b.id != a.id"
        " AND b.email_folded = a.username_folded",
    )
    phones = many(
        conn,
        "SELECT org_id, id AS first, NULL AS second, username AS value FROM users"
        " WHERE username LIKE '+%' OR username LIKE '00%'",
    )
    return crossed + phones


def patch(conn: Tx, user_id: str, changes: dict[str, object]) -> bool:
    return update_record(conn, USERS, user_id, changes)


def delete(conn: Tx, user_id: str) -> bool:
    conn.execute("DELETE FROM users WHERE id = ?", (user_id,))
    return conn.changes() == 1


def last_seen(conn: Tx, user_ids: Sequence[str]) -> dict[str, str]:
    """When each of these users last signed in (sessions are kept until they expire)."""
    marks = ", ".join("?" for _ in user_ids)
    rows = many(
        conn,
        "SELECT account_id, max(created_date) AS seen FROM sessions"
        f" WHERE account_id IN ({marks}) GROUP BY account_id",
        tuple(user_ids),
    )
    return {str(r["account_id"]): str(r["seen"]) for r in rows}


def shown_alone(conn: Tx, user_id: str) -> tuple[Row | None, str | None]:
    """What a single GET shows beside the row: the picture (or None) and the last sign-in
    (or None). Two point queries: one statement joining them costs SQLite more."""
    picture = conn.execute(
        "SELECT content_type, data FROM pictures WHERE account_id = ?", (user_id,)
    ).fetchone()
    seen = conn.execute(LAST_SEEN_ONE, (user_id,)).fetchone()
    shown = {"content_type": picture[0], "data": picture[1]} if picture else None
    return shown, (str(seen[0]) if seen and seen[0] is not None else None)


def _column(
    kind: str, name: str, sortable: bool = True, folded: str | None = None, not_null: bool = False
) -> Field:
    sql = f"users.{name}"
    return Field(kind, sql, sortable, f"users.{folded}" if folded else None, not_null=not_null)


LIST = Table(
    "users",
    {
        "id": _column("id", "id", not_null=True),
        "username": _column("text", "username", folded="username_folded", not_null=True),
        "email": _column("text", "email", folded="email_folded", not_null=True),
        "phone_number": _column("text", "phone_number", folded="phone_folded"),
        "first_name": _column("text", "first_name"),
        "middle_name": _column("text", "middle_name"),
        "last_name": _column("text", "last_name"),
        "nickname": _column("text", "nickname"),
        "locale": _column("text", "locale"),
        "zoneinfo": _column("text", "zoneinfo"),
        "tags": _column("tags", "tags", sortable=False),
        "is_active": _column("bool", "is_active"),
        "is_delete_protected": _column("bool", "is_delete_protected"),
        "sms_mfa_enabled": _column("bool", "sms_mfa_enabled"),
        "software_mfa_enabled": _column("bool", "software_mfa_enabled"),
        "mfa_enabled": Field("bool", "(users.sms_mfa_enabled OR users.software_mfa_enabled)"),
        "is_org_admin": Field("bool", IS_ORG_ADMIN),
        "last_seen": Field("datetime", LAST_SEEN),
        "created_date": _column("datetime", "created_date", not_null=True),
        "created_by": _column("id", "created_by"),
        "last_updated_date": _column("datetime", "last_updated_date", not_null=True),
        "last_updated_by": _column("id", "last_updated_by"),
    },
    fts="users_fts",
    fts_columns=(
        "username",
        "email",
        "first_name",
        "last_name",
        "nickname",
        "phone_number",
        "tags",
    ),
    json_columns=("custom_attributes", "restricted_custom_attributes"),
    codec=USERS,
)
