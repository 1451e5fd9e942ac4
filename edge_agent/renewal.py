"""The device keeps its client certificate renewed (docs/agent.md, docs/provisioning.md).

At start and every `certificates.check_seconds` the agent looks at its certificate's
`not_after`, and once less than a third of its life, or less than
`certificates.renew_before_days`, is left (whichever comes first) it renews it:

1. a new EC P-256 key beside the working one (`<key_file>.next`, 0600; an attempt that
   failed left one, and it is used again), and a CSR for it;
2. `POST /v2/provisioning/renew` with the CSR, signed in by the working certificate
   (mutual TLS) when the server is https://, else (or when the certificate is refused: it
   was already superseded by a renewal whose answer was lost) by the API key;
3. the certificate written beside the working one and both renamed over it (pair.py);
4. the MQTT connection dropped, so that it signs in again with the new pair (the server
   closes the one made with the old certificate anyway: that is superseded now).

A failed attempt is tried again after a wait that doubles from `reconnect.min_seconds` up to
`certificates.check_seconds` (a 429 after its Retry-After), and the working pair is never
touched until the new certificate is in hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
from cryptography import x509

from edge_agent import keys
from edge_agent.backoff import Backoff
from edge_agent.files import write_bytes
from edge_agent.link import Link, say
from edge_agent.pair import Pair
from edge_agent.server_api import TIMEOUT, context, tls
from edge_agent.settings import Settings

RENEW = "/v2/provisioning/renew"
Json = dict[str, Any]


@dataclass
class Failed(Exception):
    """A renewal that did not happen: why, and when the server asked to be asked again."""

    why: str
    retry_after: float | None = None


def due(certificate: x509.Certificate, now: datetime, renew_before: timedelta) -> bool:
    """Whether less than a third of the certificate's life, or less than `renew_before`,
    is left."""
    life = certificate.not_valid_after_utc - certificate.not_valid_before_utc
    return certificate.not_valid_after_utc - now < max(life / 3, renew_before)


class Renewal:
    def __init__(self, settings: Settings, pair: Pair, link: Link) -> None:
        self.settings = settings
        self.pair = pair
        self.link = link
        # A failed attempt waits as a lost connection does, at most until the next look.
        check = settings.certificates.check_seconds
        self._backoff = Backoff(settings.reconnect_min, max(settings.reconnect_min, check))

    def recover(self) -> None:
        """Before the agent signs in: finish or undo a renewal a kill interrupted."""
        done = self.pair.recover()
        if done:
            say(f"certificate: {done}")

    async def run(self, stop: asyncio.Event) -> None:
        """Looks now and then, renewing when due, until `stop` is set."""
        while not stop.is_set():
            try:
                wait = await self.check()
            except Exception as failed:  # an unforeseen failure must not end the renewals
                wait = self._failed(Failed(repr(failed)))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), wait)

    async def check(self) -> float:
        """Renews the certificate when due; the seconds until the next look."""
        try:
            certificate = self.pair.certificate()
            renew_before = timedelta(days=self.settings.certificates.renew_before_days)
            if not due(certificate, datetime.now(UTC), renew_before):
                return self.settings.certificates.check_seconds
            renewed = await self.renew()
        except (OSError, ValueError) as failed:
            return self._failed(Failed(str(failed) or repr(failed)))  # a file, with its name
        except Failed as failed:
            return self._failed(failed)
        self._backoff.succeeded()
        until = renewed.not_valid_after_utc.isoformat()
        print(f"certificate renewed: serial {renewed.serial_number:x}, until {until}", flush=True)
        self.link.reconnect()
        return self.settings.certificates.check_seconds

    async def renew(self) -> x509.Certificate:
        """A certificate for a new key, and the pair swapped; raises Failed."""
        key = keys.private_key(self.pair.next_key)
        status, answer, retry_after = await self._post({"csr": keys.csr(key)})
        if status != 201:
            message = answer.get("message", "")
            raise Failed(f"the server refused the renewal ({status}): {message}", retry_after)
        try:
            pem = str(answer["certificate"]["certificate"]).encode()
            certificate = x509.load_pem_x509_certificate(pem)
        except (KeyError, TypeError, ValueError):
            raise Failed("the server's answer holds no certificate") from None
        if certificate.public_key() != key.public_key():
            raise Failed("the server's certificate is not for the key this device sent")
        write_bytes(self.pair.next_certificate, pem)
        self.pair.commit()
        return certificate

    async def _post(self, body: Json) -> tuple[int, Json, float | None]:
        """By the certificate over https://; by the API key over http://, or when the
        certificate is refused."""
        api_key = self.settings.api_key
        try:
            async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
                if self.settings.server.startswith("https:"):
                    answered = await _call(session, self.settings.server, body, {}, self._mtls())
                    if answered[0] != 401 or not api_key:
                        return answered
                if not api_key:
                    raise Failed("over http:// the device's API key is needed to renew")
                bearer = {"Authorization": f"Bearer {api_key}"}
                return await _call(
                    session, self.settings.server, body, bearer, tls(self.settings.ca_file)
                )
        except (aiohttp.ClientError, OSError, TimeoutError) as failed:
            raise Failed(f"cannot reach {self.settings.server}: {failed!r}") from None

    def _mtls(self) -> ssl.SSLContext:
        made = context(self.settings.ca_file)
        made.load_cert_chain(self.pair.certificate_file, self.pair.key_file)
        return made

    def _failed(self, failed: Failed) -> float:
        say(f"certificate renewal: {failed.why}; trying again later")
        return failed.retry_after or self._backoff.next_wait()


async def _call(
    session: aiohttp.ClientSession,
    server: str,
    body: Json,
    headers: dict[str, str],
    checked: ssl.SSLContext | bool,
) -> tuple[int, Json, float | None]:
    async with session.post(server + RENEW, json=body, headers=headers, ssl=checked) as response:
        try:
            answer = await response.json(content_type=None)
        except ValueError:
            answer = None
        retry = response.headers.get("Retry-After", "")
        retry_after = float(retry) if retry.isdigit() else None
        return response.status, answer if isinstance(answer, dict) else {}, retry_after
