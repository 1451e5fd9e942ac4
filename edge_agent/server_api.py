"""The device's HTTP calls to the server (jobs, tunnels' tokens), with its API key as the
bearer, over https:// checked against the site CA when the settings name one.

A refusal is an answer (the status and the JSON body, `{"message"}`); a server that cannot
be reached raises `aiohttp.ClientError` or `OSError`, for the caller to try again later.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import aiohttp

from edge_agent.settings import Settings

Json = dict[str, Any]
TIMEOUT = aiohttp.ClientTimeout(total=60, sock_connect=15)


def tls(ca_file: Path | None) -> ssl.SSLContext | bool:
    """How https:// is checked: against the system's CAs, and the site CA when given (a
    presigned URL may name a proxy with a public certificate, the API the site's own)."""
    return True if ca_file is None else context(ca_file)


def context(ca_file: Path | None) -> ssl.SSLContext:
    """A client's TLS context: the system's CAs, and the site CA when given."""
    made = ssl.create_default_context()
    if ca_file is not None:
        made.load_verify_locations(cafile=str(ca_file))
    return made


class ServerApi:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=TIMEOUT)
        return self._session

    async def call(self, method: str, path: str, body: Json | None = None) -> tuple[int, Json]:
        key = {"Authorization": f"Bearer {self.settings.api_key}"}
        url = f"{self.settings.server}{path}"
        async with self.session.request(
            method, url, json=body, headers=key, ssl=tls(self.settings.ca_file)
        ) as response:
            try:
                answer = await response.json(content_type=None)
            except ValueError:
                answer = None
            return response.status, answer if isinstance(answer, dict) else {}

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
