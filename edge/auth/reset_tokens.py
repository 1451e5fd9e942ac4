"""Password reset tokens: 256 random bits, shown once, stored only hashed, used once.

`issue` is called by forgot-password and by an admin's account recovery; `redeem` by the
password endpoint. A token lives `hours` (the org's or project's reset_token_expire_hours,
1..168: the interface allows at most a week).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from edge.kernel import clock
from edge.kernel.errors import ValidationError
from storage import reset_tokens as store
from storage.database import Database
from storage.records import Org, Project, User
from storage.rows import Tx

MAX_HOURS = 168
DEFAULT_HOURS = 24
INVALID = "Reset token is invalid or has expired"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def issue(db: Database, user_row: User, hours: int) -> str:
    """A new reset token for this user, valid `hours` (clamped to 1..168)."""
    hours = min(max(int(hours), 1), MAX_HOURS)
    token = secrets.token_urlsafe(32)
    now = clock.now()
    row = {
        "token_hash": _hash(token),
        "user_id": user_row["id"],
        "org_id": user_row["org_id"],
        "created_date": clock.iso(now),
        "expires_at": clock.iso(now + timedelta(hours=hours)),
    }

    def write(conn: Tx) -> None:
        store.purge_expired(conn, clock.iso(now))
        store.create(conn, row)

    await db.write(write)
    return token


def check(db: Database, token: str) -> str:
    """The user ID a live token belongs to, without using it up; else ValidationError."""
    row = db.read(lambda c: store.peek(c, _hash(token)))
    if row is None or row["expires_at"] <= clock.now_iso():
        raise ValidationError(None, INVALID)
    return str(row["user_id"])


def redeem(conn: Tx, token: str) -> str:
    """Use the token up inside the caller's write transaction; the user ID it was for.

    Raises ValidationError (rolling the transaction back) when it is unknown, already
    used or expired.
    """
    row = store.take(conn, _hash(token))
    if row is None or row["expires_at"] <= clock.now_iso():
        raise ValidationError(None, INVALID)
    return str(row["user_id"])


async def redeem_now(db: Database, token: str) -> str:
    """Use the token up in a transaction of its own; the user ID it was for."""
    return await db.write(lambda c: redeem(c, token))


def hours_for(org: Org, project: Project | None = None) -> int:
    """The project's reset_token_expire_hours when it sets one, else the org's, else 24;
    never more than a week."""
    for row in (project, org):
        if row is not None:
            value = row["settings"].get("reset_token_expire_hours")
            if isinstance(value, int) and not isinstance(value, bool):
                return min(max(value, 1), MAX_HOURS)
    return DEFAULT_HOURS
