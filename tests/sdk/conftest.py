"""A live server on a real loopback port for the real `cyphermed` SDK to talk to."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from edge.app import Site
from tests.world import World


@pytest.fixture
async def base_url(aiohttp_server: Any, app: web.Application) -> str:
    """The URL of the test's own app, listening on 127.0.0.1 on a free port.

    The SDK is synchronous (httpx): call it through `asyncio.to_thread` so this loop,
    which serves the requests, keeps running.
    """
    server = await aiohttp_server(app)
    return str(server.make_url("")).rstrip("/")


@pytest.fixture
def world(world_template: World, site: Site) -> World:
    """The world (tests/world.py) without a test client of its own: the SDK is the client."""
    return world_template.bound(site, None)
