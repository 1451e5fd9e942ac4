"""A live server on a real loopback port for the real `cyphermed` SDK to talk to."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web


@pytest.fixture
async def base_url(aiohttp_server: Any, app: web.Application) -> str:
    """The URL of the test's own app, listening on 127.0.0.1 on a free port.

    The SDK is synchronous (httpx): call it through `asyncio.to_thread` so this loop,
    which serves the requests, keeps running.
    """
    server = await aiohttp_server(app)
    return str(server.make_url("")).rstrip("/")
