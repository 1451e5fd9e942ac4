"""Software MFA (TOTP), recovery codes, the MFA preference, and removing a factor.

TOTP secrets cannot be hashed (we must compute codes from them), so they are encrypted at
rest with the Fernet key in `<data>/keys/`; recovery codes are kept as SHA-256 only. All
comparisons of secrets run in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Any

import pyotp
from cryptography.fernet import Fernet

from edge.auth import reset_tokens
from edge.auth.tokens import Tokens
from edge.delivery.messages import Messages
from edge.kernel import audit, clock
from edge.kernel.errors import Denied, Unauthenticated, ValidationError
from edge.kernel.principal import Principal
from edge.tenancy.orgs import Orgs
from storage import mfa as store
from storage import users
from storage.database import Database
from storage.records import AuditEvent
from storage.records import User as User  # the account record its callers hand back
from storage.rows import Row

SOFTWARE, SMS = "SOFTWARE", "SMS"
KINDS = {"software": SOFTWARE, "sms": SMS}
# Every spelling clients use for a factor: ours, the SDK's `mfa_choice` (software, sms),
# the challenge names (SOFTWARE_TOKEN_MFA, SMS_MFA); compared without case, `-` or space.
PREFERENCES = {
    "software": SOFTWARE,
    "software_token": SOFTWARE,
    "software_token_mfa": SOFTWARE,
    "software_mfa": SOFTWARE,
    "totp": SOFTWARE,
    "sms": SMS,
    "sms_mfa": SMS,
}
_CODE = re.compile(r"^[0-9]{6}$")
ISSUER = "edge"


def digest(value: str) -> str:
    return hashlib.sha256(value.strip().encode()).hexdigest()


def same(stored_hash: str | None, value: str) -> bool:
    """Constant-time check of a value against its stored hash."""
    return hmac.compare_digest(stored_hash or "", digest(value)) and stored_hash is not None


def new_recovery_code() -> str:
    raw = secrets.token_hex(8).upper()
    return "-".join(raw[i : i + 4] for i in range(0, 16, 4))


def software_code(value: str | None) -> str:
    """A TOTP code as typed: empty or too short is a 400, not a failed attempt."""
    code = (value or "").strip()
    if not _CODE.match(code):
        raise ValidationError("mfa_code", "must be the 6-digit code of your authenticator app")
    return code


def preference(value: str) -> str:
    """The canonical name (SOFTWARE or SMS) of a factor however a client spelled it."""
    key = re.sub(r"[\s-]+", "_", value.strip()).lower()
    choice = PREFERENCES.get(key)
    if choice is None:
        raise ValidationError(
            "preferred_mfa", "must be SOFTWARE or SMS (or SOFTWARE_TOKEN_MFA, SMS_MFA)"
        )
    return choice


def mfa_required(orgs: Orgs, org_id: str) -> bool:
    return bool(orgs.get_row(org_id).settings.get("mfa_required", False))


class Mfa:
    def __init__(self, db: Database, fernet_key: bytes, orgs: Orgs, tokens: Tokens) -> None:
        self._db = db
        self._fernet = Fernet(fernet_key)
        self._orgs = orgs
        self._tokens = tokens

    # -- software ------------------------------------------------------------------------
    async def secret_code(self, user: User) -> dict[str, Any]:
        """A new TOTP secret, pending until a code from it is confirmed."""
        secret = pyotp.random_base32()
        enc = self._fernet.encrypt(secret.encode()).decode()
        now = clock.now_iso()
        await self._db.write(
            lambda c: store.put(c, user["id"], "software", {"pending_enc": enc}, now)
        )
        uri = pyotp.TOTP(secret).provisioning_uri(name=user["username"], issuer_name=ISSUER)
        return {"secret_code": secret, "uri": uri}

    async def add_software(self, user: User, code: str, set_preferred: bool) -> str:
        row = self._db.read(lambda c: store.get(c, user["id"], "software"))
        pending = row and row["pending_enc"]
        step = _totp_step(self._decrypt(pending), software_code(code)) if pending else None
        if step is None:
            raise ValidationError("mfa_code", "Invalid Code")
        recovery = new_recovery_code()
        values = {
            "secret_enc": pending,
            "pending_enc": None,
            "recovery_hash": digest(recovery),
            "last_totp_step": step,  # the confirming code cannot then sign in
        }
        flags: Row = {"software_mfa_enabled": 1}
        if set_preferred or not user["preferred_mfa"]:
            flags["preferred_mfa"] = SOFTWARE
        now = clock.now_iso()

        def write(conn: Any) -> None:
            store.put(conn, user["id"], "software", values, now)
            store.set_user(conn, user["id"], flags)

        await self._db.write(audit.along(write, mfa_event("mfa_enabled", user, "software")))
        return recovery

    async def verify_software(self, user_id: str, code: str) -> bool:
        """A code of the user's authenticator, accepted once: a code of a time step that
        was already accepted (the same code again, or an older one) is refused."""
        row = self._db.read(lambda c: store.get(c, user_id, "software"))
        if row is None or not row["secret_enc"]:
            return False
        step = _totp_step(self._decrypt(row["secret_enc"]), code)
        if step is None:
            return False
        return await self._db.write(lambda c: store.accept_totp_step(c, user_id, step))

    def recovery_ok(self, user_id: str, kind: str, code: str) -> bool:
        row = self._db.read(lambda c: store.get(c, user_id, kind))
        return bool(code.strip()) and same(row["recovery_hash"] if row else None, code)

    # -- preference and removal ----------------------------------------------------------
    async def set_preferred(self, user: User, value: str) -> None:
        choice = preference(value)
        if not user[f"{choice.lower()}_mfa_enabled"]:
            raise ValidationError("preferred_mfa", f"{choice} MFA is not set up")
        await self._db.write(lambda c: store.set_user(c, user["id"], {"preferred_mfa": choice}))

    async def remove(
        self, user: User, kind: str, *, recovery_code: str | None, by_admin: bool
    ) -> None:
        """Remove a factor. Under an MFA policy a user needs the recovery code unless another
        factor remains; removing the last required factor ends every session of the user."""
        other = "sms" if kind == "software" else "software"
        required = mfa_required(self._orgs, user["org_id"])
        if recovery_code and not self.recovery_ok(user["id"], kind, recovery_code):
            raise ValidationError("recovery_code", "Invalid Code")
        last = not user[f"{other}_mfa_enabled"]
        if required and last and not by_admin and not recovery_code:
            raise Denied(
                "Your organization requires MFA: set up another MFA method first, "
                "or use your recovery code to remove a lost device"
            )
        removed = mfa_event("mfa_disabled", user, kind, {"by_recovery": bool(recovery_code)})
        await self._db.write(audit.along(lambda c: _remove(c, user, kind), removed))
        if required and last:
            await self._tokens.revoke_accounts([user["id"]])

    def _decrypt(self, token: str) -> str:
        return self._fernet.decrypt(token.encode()).decode()

    def user(self, user_id: str) -> User:
        row = self._db.read(lambda c: users.get(c, user_id))
        if row is None or not row["is_active"]:
            raise Unauthenticated("Account is not active")
        return row


async def send_recovery(
    db: Database, messages: Messages, user: User, hours: int, template_id: str | None
) -> None:
    """Queue the account-recovery mail with a fresh reset token."""
    if not user["email"]:
        raise ValidationError(None, "This user has no e-mail address")
    token = await reset_tokens.issue(db, user, hours)
    await messages.account_recovery(messages.recipient(user["id"]), token, hours, template_id)


def reset_hours(orgs: Orgs, user: User) -> int:
    value = orgs.get_row(user["org_id"]).settings.get("reset_token_expire_hours")
    return value if isinstance(value, int) and not isinstance(value, bool) else 24


def _totp_step(secret: str, code: str) -> int | None:
    """The time step (now, or one either side for clock drift) whose code this is."""
    totp = pyotp.TOTP(secret)
    now = totp.timecode(clock.now())
    found = None
    for step in (now - 1, now, now + 1):  # check all three, so timing does not tell which
        if hmac.compare_digest(totp.generate_otp(step), code):
            found = step
    return found


def mfa_event(action: str, user: User, kind: str, more: dict[str, Any] | None = None) -> AuditEvent:
    """A change of a user's MFA, by the caller (the user, or an admin of theirs)."""
    who = audit.caller_or(Principal("user", user["id"], None, user["org_id"]))
    details = {"method": kind, **(more or {})}
    return audit.event(
        action, who, org_id=user["org_id"], target=("user", user["id"]), details=details
    )


def _remove(conn: Any, user: User, kind: str) -> None:
    store.delete(conn, user["id"], kind)
    flags: Row = {f"{kind}_mfa_enabled": 0}
    if user["preferred_mfa"] == KINDS[kind]:
        other = "sms" if kind == "software" else "software"
        flags["preferred_mfa"] = KINDS[other] if user[f"{other}_mfa_enabled"] else None
    if kind == "sms":
        flags["phone_number_verified"] = 0
    store.set_user(conn, user["id"], flags)
