"""Mail delivery: over SMTP (stdlib smtplib, run in a thread), or to `.eml` files.

File mode is the default when no `smtp_host` is set: each message is written to
`<data>/outbox/mail/<id>.eml` through a temporary file and a rename, so a reader (or a
tool that forwards the folder) never sees half a message; the files and their folders are
owner-only whatever the umask, as they carry reset tokens and temporary passwords. The
SMTP password is a Secret and is revealed only to smtplib's login call; errors name the
server, never the password.
"""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Any, Protocol

from edge.kernel.config import Config
from storage import layout

SMTP_TIMEOUT = 30


class DeliveryError(Exception):
    """A message could not be delivered now; the worker retries it later."""


class Mailer(Protocol):
    async def send(self, message: EmailMessage) -> None: ...


def build_message(row: dict[str, Any], default_from: str) -> EmailMessage:
    """An outbox row as a MIME message: text, plus an HTML alternative when there is one."""
    message = EmailMessage()
    message["From"] = row.get("from_address") or default_from
    message["To"] = row["recipient"]
    message["Subject"] = row["subject"]
    message["Date"] = formatdate(localtime=False, usegmt=True)
    message["Message-ID"] = make_msgid(idstring=str(row["id"]), domain="edge.local")
    message.set_content(row["body_text"])
    if row.get("body_html"):
        message.add_alternative(row["body_html"], subtype="html")
    return message


class FileMailer:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    async def send(self, message: EmailMessage) -> None:
        await asyncio.to_thread(self._write, message)

    def _write(self, message: EmailMessage) -> None:
        layout.private_dir(self.folder)
        name = str(message["Message-ID"]).strip("<>").replace("/", "_")
        layout.write_secret(self.folder / f"{name}.eml", message.as_bytes())


class SmtpMailer:
    def __init__(self, config: Config) -> None:
        if config.smtp_host is None:
            raise ValueError("SmtpMailer needs smtp_host")
        self._host = config.smtp_host
        self._port = config.smtp_port
        self._security = config.smtp_security
        self._username = config.smtp_username
        self._password = config.smtp_password

    async def send(self, message: EmailMessage) -> None:
        try:
            await asyncio.to_thread(self._send, message)
        except (OSError, smtplib.SMTPException) as exc:
            raise DeliveryError(f"SMTP {self._host}:{self._port}: {_reason(exc)}") from None

    def _send(self, message: EmailMessage) -> None:
        with self._connect() as smtp:
            if self._security == "starttls":
                smtp.starttls(context=ssl.create_default_context())
            if self._username and self._password is not None:
                smtp.login(self._username, self._password.reveal())
            smtp.send_message(message)

    def _connect(self) -> smtplib.SMTP:
        if self._security == "tls":
            context = ssl.create_default_context()
            return smtplib.SMTP_SSL(self._host, self._port, timeout=SMTP_TIMEOUT, context=context)
        return smtplib.SMTP(self._host, self._port, timeout=SMTP_TIMEOUT)


def _reason(exc: BaseException) -> str:
    """A short reason for `last_error`: the SMTP code and text, or the OS error."""
    if isinstance(exc, smtplib.SMTPResponseException):
        text = (
            exc.smtp_error.decode("utf-8", "replace")
            if isinstance(exc.smtp_error, bytes)
            else str(exc.smtp_error)
        )
        return f"{exc.smtp_code} {text}"[:500]
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return "recipient refused"
    return f"{type(exc).__name__}: {exc}"[:500]


def mailer_for(config: Config, folder: Path) -> Mailer:
    return SmtpMailer(config) if config.smtp_host else FileMailer(folder)
