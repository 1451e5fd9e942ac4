"""Challenge sessions: short-lived (the org's `session_expire_mins`), single-use, hashed.

The client receives the session in a Challenge and sends it back as its bearer token on
`POST /v2/auth/challenge` (and, during MFA_SETUP, on the MFA setup calls).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from edge.kernel import clock
from edge.kernel.errors import Unauthenticated
from storage import challenges as store
from storage.database import Database
from storage.records import Org, User
from storage.rows import Row

RESTART = "Session is invalid or has expired: restart sign-in"
MESSAGES = {
    "NEW_PASSWORD_REQUIRED": "Choose a new password",
    "SOFTWARE_TOKEN_MFA": "Enter the code of your authenticator app",
    "SMS_MFA": "Enter the code sent to your phone",
    "MFA_SETUP": "Your organization requires MFA: set it up to finish signing in",
    "SELECT_MFA_TYPE": "Choose an MFA method: software or sms",
}


def _hash(session: str) -> str:
    return hashlib.sha256(session.encode()).hexdigest()


class Challenges:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def issue(
        self, kind: str, user: User, org: Org, project_id: str | None, **extra: Any
    ) -> dict[str, Any]:
        session = secrets.token_urlsafe(32)
        minutes = int(org["settings"].get("session_expire_mins", 5))
        row = {
            "session_hash": _hash(session),
            "kind": kind,
            "user_id": user["id"],
            "org_id": org["id"],
            "project_id": project_id,
            "expires_at": clock.iso(clock.now() + timedelta(minutes=minutes)),
            **extra,
        }
        now = clock.now_iso()

        def write(conn: Any) -> None:
            store.purge_expired(conn, now)
            store.create(conn, row)

        await self._db.write(write)
        return {"challenge": kind, "message": MESSAGES[kind], "session": session}

    def find(self, session: str) -> Row | None:
        """The live challenge of this session, or None."""
        row = self._db.read(lambda c: store.get(c, _hash(session)))
        if row is None or row["used"] or row["expires_at"] <= clock.now_iso():
            return None
        return row

    def require(self, session: str | None, *kinds: str) -> Row:
        row = self.find(session) if session else None
        if row is None or (kinds and row["kind"] not in kinds):
            raise Unauthenticated(RESTART)
        return row

    async def use(self, row: Row) -> None:
        """Spend the session; a second use (a replay or a race) must restart sign-in."""
        if not await self._db.write(lambda c: store.use(c, row["session_hash"])):
            raise Unauthenticated(RESTART)
