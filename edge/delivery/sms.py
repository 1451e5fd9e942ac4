"""SMS delivery through a pluggable sender: text files by default, or an HTTP gateway.

The gateway gets a POST of `sms_gateway_body` with `{to}` and `{text}` filled in. A body
that starts with `{` or `[` is JSON: the values are inserted JSON-escaped and sent as
`application/json`; any other body is a form, with URL-encoded values. The optional
`sms_gateway_auth_header` (a Secret) is sent as the Authorization header. Any 2xx answer
counts as sent; anything else (or no answer) is retried by the worker.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Protocol
from urllib.parse import quote_plus

import aiohttp

from edge.delivery.mailer import DeliveryError
from edge.kernel.config import Secret
from storage import layout

GATEWAY_TIMEOUT = 30


class SmsSender(Protocol):
    async def send(self, message_id: str, to: str, text: str) -> None: ...


class FileSms:
    """One `<id>.txt` per SMS under `<data>/outbox/sms/`: `To:` line, blank line, text."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    async def send(self, message_id: str, to: str, text: str) -> None:
        await asyncio.to_thread(self._write, message_id, to, text)

    def _write(self, message_id: str, to: str, text: str) -> None:
        layout.private_dir(self.folder)  # codes and passwords: owner-only, whatever the umask
        layout.write_secret(self.folder / f"{message_id}.txt", f"To: {to}\n\n{text}\n".encode())


class HttpSms:
    def __init__(self, url: str, body: str, auth_header: Secret | None) -> None:
        self._url = url
        self._body = body
        self._auth = auth_header
        self._json = body.lstrip().startswith(("{", "["))

    def render(self, to: str, text: str) -> str:
        escape = _json_escape if self._json else quote_plus
        return self._body.replace("{to}", escape(to)).replace("{text}", escape(text))

    async def send(self, message_id: str, to: str, text: str) -> None:
        headers = {
            "Content-Type": "application/json"
            if self._json
            else "application/x-www-form-urlencoded"
        }
        if self._auth is not None:
            headers["Authorization"] = self._auth.reveal()
        timeout = aiohttp.ClientTimeout(total=GATEWAY_TIMEOUT)
        try:
            async with aiohttp.ClientSession(timeout=timeout) as session:
                async with session.post(
                    self._url, data=self.render(to, text).encode(), headers=headers
                ) as reply:
                    if not 200 <= reply.status < 300:
                        raise DeliveryError(f"SMS gateway answered {reply.status}")
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise DeliveryError(f"SMS gateway unreachable: {type(exc).__name__}") from None


def _json_escape(value: str) -> str:
    return json.dumps(value)[1:-1]


def sender_for(url: str | None, body: str, auth: Secret | None, folder: Path) -> SmsSender:
    return HttpSms(url, body, auth) if url else FileSms(folder)
