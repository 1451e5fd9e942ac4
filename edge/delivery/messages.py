"""Outgoing messages: what the server tells people, queued in the durable outbox.

Every message is written to the outbox in its own transaction and delivered by the
outbox worker (mail over SMTP or to `.eml` files; SMS through the configured sender),
so a crash between the request and the delivery loses nothing. Texts come from the
org's (or project's) e-mail templates when one fits, else from the built-in ones below.

Choosing a template (docs/messaging.md): the one named by `template_id` when given, else
an active template flagged for the purpose (`for_new_users`, `for_account_recovery`); the
recipient's project's before the org's, and within each the recipient's locale, then the
project's `default_locale`, then the org's, then any.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from edge.delivery import templating
from edge.kernel import clock, ids
from edge.kernel.errors import NotFound
from storage import email_templates as template_store
from storage import outbox
from storage.database import Database

Row = dict[str, Any]


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


@dataclass(frozen=True)
class Texts:
    subject: str
    text: str
    html: str | None = None
    from_address: str | None = None


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
TUNNEL_SUBJECT = "Tunnel to {device_name} ({org_name})"
TUNNEL_TEXT = (
    "Hello {username},\n\na tunnel to the device {device_name} of {org_name} was opened for"
    " you.\n\n    tunnel:   {tunnel_id}\n    services: {services}\n    until:    {expires_date}"
    " (UTC)\n\nAccess token (keep it secret; it works only for this tunnel, until it closes):"
    "\n\n    {client_access_token}\n\nTo use it, run on your machine:\n\n"
    "    EDGE_TUNNEL_TOKEN=<the token> {connect_command}\n\n"
    "then connect to 127.0.0.1:2222 (for SSH: ssh -p 2222 <user>@127.0.0.1).\n"
)
# Messages whose body holds a secret: the outbox empties their body once delivered (or
# given up on), so no copy stays in the database.
SECRET_PURPOSES = frozenset({"tunnel"})
FLAGS = {"invitation": "for_new_users", "account_recovery": "for_account_recovery"}


class Messages:
    def __init__(self, db: Database, site_url: str) -> None:
        self._db = db
        self._site_url = site_url

    def recipient(self, user_id: str) -> Recipient:
        """A user as a recipient, with their org's and project's names."""
        user = self._db.read(lambda c: template_store.user(c, user_id))
        if user is None:
            raise NotFound("User not found")
        org, project = self._db.read(
            lambda c: template_store.context(c, user["org_id"], user.get("project_id"))
        )
        return Recipient(
            user_id=user_id,
            email=user.get("email"),
            phone=user.get("phone_number"),
            username=user["username"],
            org_id=user["org_id"],
            org_name=str(org.get("name", "")),
            project_id=project["id"] if project else None,
            project_name=project["name"] if project else None,
            first_name=user.get("first_name"),
            last_name=user.get("last_name"),
            nickname=user.get("nickname"),
            locale=user.get("locale") or "en-US",
            zoneinfo=user.get("zoneinfo") or "UTC",
        )

    async def invitation(self, to: Recipient, temporary_password: str) -> str:
        own = {"temporary_password": temporary_password, "sign_in_url": self._site_url}
        texts = self._templated(to, "invitation", own, None)
        if texts is None:
            hint = f"Sign-in address: {self._site_url}\n"
            text = INVITATION_TEXT.format(
                username=to.username,
                org_name=to.org_name,
                temporary_password=temporary_password,
                sign_in_hint=hint,
            )
            texts = Texts(INVITATION_SUBJECT.format(org_name=to.org_name), text)
        return await self._mail(to, "invitation", texts)

    async def account_recovery(
        self,
        to: Recipient,
        reset_token: str,
        expires_hours: int,
        template_id: str | None = None,
    ) -> str:
        """`template_id` names a template of the recipient's org (the admin recovery mail)."""
        own = {
            "reset_token": reset_token,
            "expires_hours": str(expires_hours),
            "sign_in_url": self._site_url,
        }
        texts = self._templated(to, "account_recovery", own, template_id)
        if texts is None:
            text = RECOVERY_TEXT.format(
                username=to.username,
                org_name=to.org_name,
                reset_token=reset_token,
                expires_hours=expires_hours,
            )
            texts = Texts(RECOVERY_SUBJECT.format(org_name=to.org_name), text)
        return await self._mail(to, "account_recovery", texts)

    async def sms_code(self, to: Recipient, phone: str, code: str) -> str:
        text = SMS_TEXT.format(org_name=to.org_name, code=code)
        return await self._queue("sms", "sms_code", phone, Texts("", text), to.org_id)

    async def tunnel_details(self, to: Recipient, details: dict[str, str]) -> str:
        """A tunnel's details and client token (docs/tunnels.md); the body is removed from
        the outbox once delivered."""
        values = {"username": to.username, "org_name": to.org_name, **details}
        texts = Texts(TUNNEL_SUBJECT.format(**values), TUNNEL_TEXT.format(**values))
        return await self._mail(to, "tunnel", texts)

    # -- templates -------------------------------------------------------------------------
    def _templated(
        self, to: Recipient, purpose: str, own: dict[str, str], template_id: str | None
    ) -> Texts | None:
        template = self._choose(to, purpose, template_id)
        if template is None:
            return None
        values = {**dict.fromkeys(json.loads(template["custom_args"]), ""), **variables(to), **own}
        return Texts(
            subject=templating.render(template["subject"], values).replace("\n", " ").strip(),
            text=templating.render(template["body_txt"], values),
            html=templating.render(template["body_html"], values, escape=True) or None,
            from_address=template["from_address"],
        )

    def _choose(self, to: Recipient, purpose: str, template_id: str | None) -> Row | None:
        if template_id is not None:
            row = self._db.read(lambda c: template_store.get(c, template_id))
            if row is None or row["org_id"] != to.org_id or not row["is_active"]:
                raise NotFound("E-mail template not found")
            return row
        rows = self._db.read(
            lambda c: template_store.candidates(c, to.org_id, to.project_id, FLAGS[purpose])
        )
        if not rows:
            return None
        return best(rows, self._locales(to))

    def _locales(self, to: Recipient) -> list[str]:
        org, project = self._db.read(lambda c: template_store.context(c, to.org_id, to.project_id))
        wanted = [to.locale]
        for owner in (project, org):
            if owner:
                found = json.loads(owner.get("settings") or "{}").get("default_locale")
                if found:
                    wanted.append(str(found))
        return wanted

    # -- the outbox ------------------------------------------------------------------------
    async def _mail(self, to: Recipient, purpose: str, texts: Texts) -> str:
        if not to.email:
            raise ValueError(f"{to.user_id} has no e-mail address")
        return await self._queue("mail", purpose, to.email, texts, to.org_id)

    async def _queue(
        self, channel: str, purpose: str, recipient: str, texts: Texts, org_id: str | None
    ) -> str:
        now = clock.now_iso()
        row: dict[str, Any] = {
            "id": ids.new_id(),
            "channel": channel,
            "purpose": purpose,
            "recipient": recipient,
            "subject": texts.subject,
            "body_text": texts.text,
            "body_html": texts.html,
            "from_address": texts.from_address,
            "org_id": org_id,
            "next_attempt_at": now,
            "created_date": now,
        }
        await self._db.write(lambda c: outbox.enqueue(c, row))
        return str(row["id"])


def best(rows: list[Row], locales: list[str]) -> Row:
    """Project templates before org ones; within a level, the first wanted locale that has one.

    For each wanted locale an exact match comes first, then one of the same language
    ('de-DE' for 'de-AT'); a level with no match gives its oldest template.
    """
    levels = [[r for r in rows if r["project_id"] is not None]]
    levels.append([r for r in rows if r["project_id"] is None])
    for level in (lv for lv in levels if lv):
        for wanted in locales:
            found = _matching(level, wanted)
            if found is not None:
                return found
        return level[0]
    return rows[0]


def _matching(rows: list[Row], wanted: str) -> Row | None:
    language = wanted.split("-")[0].casefold()
    exact = [r for r in rows if str(r["locale"]).casefold() == wanted.casefold()]
    same_language = [r for r in rows if str(r["locale"]).split("-")[0].casefold() == language]
    found = exact or same_language
    return found[0] if found else None


def variables(to: Recipient) -> dict[str, str]:
    """The context variables of a template, dates in the recipient's time zone."""
    now = _local_now(to.zoneinfo)
    return {
        "org_name": to.org_name,
        "org_id": to.org_id,
        "project_name": to.project_name or "",
        "project_id": to.project_id or "",
        "username": to.username,
        "first_name": to.first_name or "",
        "last_name": to.last_name or "",
        "nickname": to.nickname or "",
        "datetime": now.strftime("%Y-%m-%d %H:%M %Z"),
        "date": now.strftime("%Y-%m-%d"),
        "time": now.strftime("%H:%M"),
        "zoneinfo": to.zoneinfo,
    }


def _local_now(zone: str) -> datetime:
    try:
        tz = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        tz = ZoneInfo("UTC")
    return clock.now().astimezone(tz)
