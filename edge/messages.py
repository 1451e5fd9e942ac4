"""Outgoing messages: what the server tells people, queued in the durable outbox.

Every message is written to the outbox in its own transaction and delivered by the
outbox worker (mail over SMTP or to `.eml` files; SMS through the configured sender),
so a crash between the request and the delivery loses nothing. Texts come from the
org's (or project's) e-mail templates when one fits, else from the built-in ones below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edge import clock, ids
from storage import outbox
from storage.database import Database


@dataclass(frozen=True)
class Recipient:
    """Who a message is for, and the context its text may mention."""

    user_id: str
    email: str | None
    phone: str | None
    username: str
    org_id: str
    org_name: str
    project_id: str | None = None
    project_name: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    nickname: str | None = None
    locale: str = "en-US"
    zoneinfo: str = "UTC"


INVITATION_SUBJECT = "Your {org_name} account"
INVITATION_TEXT = (
    "Hello {username},\n\nan account was created for you in {org_name}.\n"
    "Sign in with your username and this temporary password, then choose your own:\n\n"
    "    {temporary_password}\n\n{sign_in_hint}"
)
RECOVERY_SUBJECT = "Reset your {org_name} password"
RECOVERY_TEXT = (
    "Hello {username},\n\nsomeone asked to reset the password of your {org_name} account.\n"
    "Use this reset token to choose a new password (it expires in {expires_hours} hours):\n\n"
    "    {reset_token}\n\nIf it was not you, ignore this message: nothing has changed.\n"
)
SMS_TEXT = "{org_name}: your verification code is {code}"


class Messages:
    def __init__(self, db: Database, site_url: str) -> None:
        self._db = db
        self._site_url = site_url

    async def invitation(self, to: Recipient, temporary_password: str) -> str:
        hint = f"Sign-in address: {self._site_url}\n"
        text = INVITATION_TEXT.format(
            username=to.username,
            org_name=to.org_name,
            temporary_password=temporary_password,
            sign_in_hint=hint,
        )
        return await self._mail(
            to, "invitation", INVITATION_SUBJECT.format(org_name=to.org_name), text
        )

    async def account_recovery(self, to: Recipient, reset_token: str, expires_hours: int) -> str:
        text = RECOVERY_TEXT.format(
            username=to.username,
            org_name=to.org_name,
            reset_token=reset_token,
            expires_hours=expires_hours,
        )
        subject = RECOVERY_SUBJECT.format(org_name=to.org_name)
        return await self._mail(to, "account_recovery", subject, text)

    async def sms_code(self, to: Recipient, phone: str, code: str) -> str:
        text = SMS_TEXT.format(org_name=to.org_name, code=code)
        return await self._queue("sms", "sms_code", phone, "", text, None, to.org_id)

    async def _mail(self, to: Recipient, purpose: str, subject: str, text: str) -> str:
        if not to.email:
            raise ValueError(f"{to.user_id} has no e-mail address")
        return await self._queue("mail", purpose, to.email, subject, text, None, to.org_id)

    async def _queue(
        self,
        channel: str,
        purpose: str,
        recipient: str,
        subject: str,
        text: str,
        html: str | None,
        org_id: str | None,
    ) -> str:
        now = clock.now_iso()
        row: dict[str, Any] = {
            "id": ids.new_id(),
            "channel": channel,
            "purpose": purpose,
            "recipient": recipient,
            "subject": subject,
            "body_text": text,
            "body_html": html,
            "org_id": org_id,
            "next_attempt_at": now,
            "created_date": now,
        }
        await self._db.write(lambda c: outbox.enqueue(c, row))
        return str(row["id"])
