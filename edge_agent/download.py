"""A job's artifact, downloaded into a partial file of the state folder that survives the
agent's restart, and resumed from where it stopped with an HTTP `Range` request (the
presigned URL answers them); then checked against the SHA-256 the job pinned.

The partial file is written unbuffered, so what was received is on disk whenever the
agent is killed; a partial file longer than the artifact, or a server that ignores the
range (200, not 206), starts the download over.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp

CHUNK = 64 * 1024
Told = Callable[[int], Awaitable[None]]  # told how many bytes the file holds now


class Refused(Exception):
    """The URL answered with a refusal (expired, gone): trying again will not help."""


async def fetch(
    session: aiohttp.ClientSession,
    url: str,
    part: Path,
    size: int,
    tls: ssl.SSLContext | bool,
    told: Told,
) -> None:
    """Until `part` holds `size` bytes; raises `aiohttp.ClientError` or `OSError` when the
    connection breaks (`part` keeps what came), `Refused` on a refusal."""
    have = _held(part, size)
    if have == size:
        os.close(os.open(part, os.O_WRONLY | os.O_CREAT, 0o600))  # an empty artifact too
        return
    headers = {"Range": f"bytes={have}-"} if have else {}
    async with session.get(url, headers=headers, ssl=tls) as response:
        if response.status == 416 or (have and response.status == 200):
            part.unlink(missing_ok=True)  # the server does not resume this: start over
            have = 0
            if response.status == 416:
                raise aiohttp.ClientPayloadError("the range was refused; starting over")
        elif response.status not in (200, 206):
            raise Refused(f"the artifact's URL answered {response.status}")
        descriptor = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(descriptor, "ab", buffering=0) as out:
            async for chunk in response.content.iter_chunked(CHUNK):
                out.write(chunk)
                have += len(chunk)
                await told(have)
    if have != size:
        raise aiohttp.ClientPayloadError(f"the download ended at {have} of {size} bytes")


def _held(part: Path, size: int) -> int:
    try:
        have = part.stat().st_size
    except FileNotFoundError:
        return 0
    if have > size:
        part.unlink()
        return 0
    return have


async def sha256(path: Path) -> str:
    """The file's SHA-256 (hex), read in a thread: an artifact may be large."""

    def digest() -> str:
        hashed = hashlib.sha256()
        with path.open("rb") as source:
            while block := source.read(1024 * 1024):
                hashed.update(block)
        return hashed.hexdigest()

    return await asyncio.to_thread(digest)
