"""The reference page in a real browser: headless Chromium renders it from the server alone.

`make test` installs Debian's chromium when it is missing (see the Makefile).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from typing import Any

import pytest

from edge.app import Site, create_app

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=10000",
)


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("Chromium is not installed: run `make test` (it installs Debian's chromium)")
    return found


async def render(url: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        process = await asyncio.create_subprocess_exec(
            chromium(),
            *FLAGS,
            f"--user-data-dir={profile}",
            "--dump-dom",
            url,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        out, _ = await asyncio.wait_for(process.communicate(), timeout=60)
    return out.decode()


async def test_reference_renders_every_operation_offline(aiohttp_server: Any, site: Site) -> None:
    server = await aiohttp_server(create_app(site))
    dom = await render(str(server.make_url("/v2/docs")))
    rendered = set(re.findall(r'opblock-summary-path" data-path="([^"]+)"', dom))
    assert {"/v2/health", "/v2/orgs", "/v2/orgs/{org_id}", "/v2/auth/token"} <= rendered
    assert 'href="/v2/changelog"' in dom
    assert "2.3.18" in dom


async def test_changelog_renders_as_a_page(aiohttp_server: Any, site: Site) -> None:
    server = await aiohttp_server(create_app(site))
    dom = await render(str(server.make_url("/v2/changelog")))
    assert "<h1>Changelog</h1>" in dom and "2.0.1" in dom
