"""SMS MFA, exactly as the interface's state table says.

Phase 1 (a phone number, no code) stores `pending_phone_number` and texts an OTP;
phase 2 (with `verification_code`) either enables SMS MFA or, on a wrong code, answers
'Invalid Code', removes the phone and keeps the pending number for a new OTP: phase 1
without a number then texts a new code to the pending one.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from edge.auth import mfa
from edge.delivery.messages import Messages
from edge.kernel import audit, clock, fields
from edge.kernel.errors import ValidationError
from edge.tenancy.orgs import Orgs
from storage import mfa as store
from storage.database import Database
from storage.records import User
from storage.rows import Row

CODE_LIFETIME = timedelta(minutes=10)


def new_code() -> str:
    return f"{secrets.randbelow(1_000_000):06d}"


class SmsMfa:
    def __init__(self, db: Database, orgs: Orgs, messages: Messages) -> None:
        self._db = db
        self._orgs = orgs
        self._messages = messages

    async def add(self, user: User, form: dict[str, str]) -> dict[str, Any]:
        code = (form.get("verification_code") or "").strip()
        if not code:
            number = form.get("phone_number") or user["pending_phone_number"] or ""
            return await self._phase_one(user, number)
        return await self._phase_two(user, code, _truthy(form.get("set_preferred")))

    async def _phase_one(self, user: User, phone_number: str) -> dict[str, Any]:
        phone = fields.phone("phone_number", phone_number)
        if not phone:
            raise ValidationError("phone_number", "is required")
        code = new_code()
        values = {
            "code_hash": mfa.digest(code),
            "code_expires_at": clock.iso(clock.now() + CODE_LIFETIME),
        }
        now = clock.now_iso()

        def write(conn: Any) -> None:
            store.put(conn, user["id"], "sms", values, now)
            store.set_user(conn, user["id"], {"pending_phone_number": phone})

        await self._db.write(write)
        await self._messages.sms_code(self._messages.recipient(user["id"]), phone, code)
        return {
            "message": f"A verification code was sent to {phone}",
            "pending_phone_number": phone,
            "verification_pending": True,
        }

    async def _phase_two(self, user: User, code: str, set_preferred: bool) -> dict[str, Any]:
        row = self._db.read(lambda c: store.get(c, user["id"], "sms"))
        pending = user["pending_phone_number"]
        if not pending or row is None or not _code_ok(row, code):
            await self._db.write(lambda c: _drop_phone(c, user))
            raise ValidationError(None, "Invalid Code")
        recovery = mfa.new_recovery_code()
        flags: Row = {
            "phone_number": pending,
            "phone_folded": pending,
            "phone_number_verified": 1,
            "sms_mfa_enabled": 1,
            "pending_phone_number": None,
        }
        if set_preferred or not user["preferred_mfa"]:
            flags["preferred_mfa"] = mfa.SMS
        factor = {"code_hash": None, "code_expires_at": None, "recovery_hash": mfa.digest(recovery)}
        now = clock.now_iso()

        def write(conn: Any) -> None:
            store.put(conn, user["id"], "sms", factor, now)
            store.set_user(conn, user["id"], flags)

        await self._db.write(audit.along(write, mfa.mfa_event("mfa_enabled", user, "sms")))
        return {"message": "SMS MFA enabled", "recovery_code": recovery}

    async def send_sign_in_code(self, user: User) -> str:
        """Text a sign-in OTP to the verified phone; the caller keeps only its hash."""
        code = new_code()
        await self._messages.sms_code(
            self._messages.recipient(user["id"]), user["phone_number"], code
        )
        return mfa.digest(code)


def _code_ok(row: Row, code: str) -> bool:
    fresh = bool(row["code_expires_at"]) and row["code_expires_at"] > clock.now_iso()
    return mfa.same(row["code_hash"], code) and fresh


def _drop_phone(conn: Any, user: User) -> None:
    """A wrong code: the phone is removed, the pending number kept, the OTP spent."""
    store.put(
        conn, user["id"], "sms", {"code_hash": None, "code_expires_at": None}, clock.now_iso()
    )
    flags = {"phone_number": None, "phone_folded": None, "phone_number_verified": 0}
    store.set_user(conn, user["id"], {**flags, "sms_mfa_enabled": 0})


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("true", "1", "yes", "on")
