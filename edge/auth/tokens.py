"""Access and refresh tokens, bound to a session row so revocation takes effect at once.

Access tokens are ES256 JWTs (kid in the header, keys in the JWKS) carrying the session
ID; refresh tokens are 256-bit random strings stored only as their SHA-256.
Verified principals are cached (edge/auth/principal_cache.py); every revocation goes through
`_invalidate`, and the database's auth epoch covers writes made anywhere else.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import jwt

from edge.auth.keys import KeyRing
from edge.auth.principal_cache import PrincipalCache
from edge.kernel import audit, clock, ids
from edge.kernel.errors import Denied, Unauthenticated, ValidationError
from edge.kernel.principal import Kind, Principal
from storage import epochs, orgs, sessions, staff, users
from storage.database import Database
from storage.records import AuditEvent
from storage.rows import Tx

ISSUER = "edge"
TOKEN_TYPE = "Bearer"


@dataclass(frozen=True)
class Lifetimes:
    access: timedelta = timedelta(hours=1)
    refresh: timedelta = timedelta(hours=24)


def lifetimes_of(settings: Mapping[str, Any]) -> Lifetimes:
    """The token lifetimes an org's or project's effective settings give."""
    return Lifetimes(
        access=timedelta(hours=settings["access_token_expire_hours"]),
        refresh=timedelta(hours=settings["refresh_token_expire_hours"]),
    )


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _require_active_org(conn: Tx, org_id: str) -> None:
    """A suspended org's users get no new session. Suspending it revokes those it had
    (migration 0032's trigger); checked in the transaction that writes the session, this
    also refuses a sign-in (or an MFA answer) that was under way meanwhile: either the
    suspension commits first and this sees it, or the session does and the trigger ends it."""
    org = orgs.get(conn, org_id)
    if org is None or not org.is_active:
        raise Denied("This organization is suspended")


class Tokens:
    def __init__(self, db: Database, keys: KeyRing, *, cache: bool = True) -> None:
        self._db = db
        self._keys = keys
        self.cache: PrincipalCache | None = None
        if cache:
            self.cache = PrincipalCache(lambda: db.read_memo(epochs.KEY, epochs.read).auth)

    async def open_session(
        self,
        kind: Kind,
        account_id: str,
        *,
        org_id: str | None,
        project_id: str | None,
        lifetimes: Lifetimes,
        events: tuple[AuditEvent, ...] = (),
    ) -> dict[str, Any]:
        """A new session; `events` (the sign-in's audit event) are recorded with it."""
        refresh = secrets.token_urlsafe(32)
        session_id = ids.new_id()
        now = clock.now()
        row = {
            "id": session_id,
            "account_id": account_id,
            "account_kind": kind,
            "org_id": org_id,
            "project_id": project_id,
            "refresh_hash": _hash(refresh),
            "created_date": clock.iso(now),
            "refresh_expires_at": clock.iso(now + lifetimes.refresh),
        }

        def write(conn: Tx) -> None:
            if kind != "staff" and org_id is not None:
                _require_active_org(conn, org_id)
            sessions.create(conn, row)

        await self._db.write(audit.along(write, *events))
        info = self._token_info(row, lifetimes)
        info["refresh_token"] = refresh
        return info

    async def refresh(self, refresh_token: str, lifetimes_for: Any) -> dict[str, Any]:
        row = self._db.read(lambda c: sessions.find_by_refresh(c, _hash(refresh_token)))
        if row is None or row["revoked"] or row["refresh_expires_at"] < clock.now_iso():
            raise ValidationError(None, "Invalid refresh token")
        return self._token_info(row, await lifetimes_for(row))

    async def revoke_refresh(self, refresh_token: str, principal: Principal) -> None:
        row = self._db.read(lambda c: sessions.find_by_refresh(c, _hash(refresh_token)))
        if row is None or row["account_id"] != principal.account_id:
            raise ValidationError("refresh_token", "is not a refresh token of this account")
        await self._db.write(lambda c: sessions.revoke(c, row["id"]))
        self._invalidate(session_ids={row["id"]})

    async def revoke_accounts(self, account_ids: list[str]) -> None:
        """End every session of these accounts (admin status lost, role admin turned off,
        password changed)."""
        if account_ids:
            await self._db.write(lambda c: sessions.revoke_accounts(c, account_ids))
            self._invalidate(account_ids=set(account_ids))

    async def revoke_session(self, session_id: str) -> None:
        await self._db.write(lambda c: sessions.revoke(c, session_id))
        self._invalidate(session_ids={session_id})

    def forget_accounts(self, account_ids: list[str]) -> None:
        """Drop cached principals of these accounts without ending their sessions."""
        self._invalidate(account_ids=set(account_ids))

    def _invalidate(
        self, *, session_ids: set[str] | None = None, account_ids: set[str] | None = None
    ) -> None:
        """The one path by which this process drops cached principals after a change."""
        if self.cache is None:
            return
        if session_ids:
            self.cache.drop_sessions(session_ids)
        if account_ids:
            self.cache.drop_accounts(account_ids)

    def _token_info(self, session: dict[str, Any], lifetimes: Lifetimes) -> dict[str, Any]:
        now = clock.now()
        expires = min(now + lifetimes.access, clock.parse(session["refresh_expires_at"]))
        claims = {
            "iss": ISSUER,
            "sub": session["account_id"],
            "sid": session["id"],
            "knd": session["account_kind"],
            "org": session["org_id"],
            "prj": session["project_id"],
            "iat": int(now.timestamp()),
            "exp": int(expires.timestamp()),
        }
        key = self._keys.current
        token = jwt.encode(claims, key.private, algorithm="ES256", headers={"kid": key.kid})
        seconds = max(0, int((expires - now).total_seconds()))
        return {"access_token": token, "token_type": TOKEN_TYPE, "expires_in": seconds}

    def verify(self, token: str) -> Principal:
        """The principal of a valid access token of a live session, or Unauthenticated."""
        cache = self.cache
        if cache is not None:
            now = clock.now().timestamp()
            entry = cache.get(token, now)
            if entry is not None:
                if entry.expires <= now:
                    raise Unauthenticated("Access token has expired")
                return entry.principal
        claims = self._decode(token)
        session = self._db.read(lambda c: sessions.get(c, claims["sid"]))
        if session is None or session["revoked"]:
            raise Unauthenticated("Session has ended; sign in again")
        found = self._principal(claims)
        if cache is not None:
            cache.put(token, found, float(claims["exp"]))
        return found

    def _decode(self, token: str) -> dict[str, Any]:
        try:
            kid = jwt.get_unverified_header(token).get("kid")
            key = self._keys.by_kid(kid) if isinstance(kid, str) else None
            if key is None:
                raise Unauthenticated("Invalid access token")
            claims: dict[str, Any] = jwt.decode(
                token,
                key.public,
                algorithms=["ES256"],
                issuer=ISSUER,
                options={
                    "require": ["exp", "sub", "sid"],
                    "verify_iat": False,
                    "verify_exp": False,
                },
            )
        except jwt.PyJWTError:
            raise Unauthenticated("Invalid access token") from None
        if claims["exp"] <= clock.now().timestamp():
            raise Unauthenticated("Access token has expired")
        return claims

    def _principal(self, claims: dict[str, Any]) -> Principal:
        kind = claims.get("knd")
        if kind == "staff":
            if self._db.read(lambda c: staff.get(c, claims["sub"])) is None:
                raise Unauthenticated("Account no longer exists")
            return Principal(
                "staff",
                claims["sub"],
                claims["sid"],
                claims.get("org"),
                claims.get("prj"),
            )
        user = self._db.read(lambda c: users.get(c, claims["sub"]))
        if user is None or not user["is_active"]:
            raise Unauthenticated("Account is not active")
        return Principal(
            "user",
            user["id"],
            claims["sid"],
            user["org_id"],
            claims.get("prj"),
        )
