"""Strict-Transport-Security: sent over HTTPS with the configured max-age; 0 sends none."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from edge.app import create_app, open_site
from edge.ops import tls
from tests.conftest import Api, make_config


async def https_headers(config: Any, path: str) -> dict[str, str]:
    site = open_site(config)
    runner = web.AppRunner(create_app(site))
    await runner.setup()
    server = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls.server_context(config))
    await server.start()
    port = server._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    trust = ssl.create_default_context(cafile=str(config.data_dir / "ca" / "ca.pem"))
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"https://localhost:{port}{path}", ssl=trust) as response:
                return dict(response.headers)
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("path", ["/v2/health", "/v2/no-such-thing"])
async def test_https_answers_carry_hsts(tmp_path: Path, path: str) -> None:
    config = make_config(tmp_path / "site", tls_local_ca="true")
    headers = await https_headers(config, path)
    assert headers["Strict-Transport-Security"] == "max-age=31536000"


async def test_hsts_max_age_is_configurable(tmp_path: Path) -> None:
    config = make_config(tmp_path / "site", tls_local_ca="true", hsts_max_age=600)
    headers = await https_headers(config, "/v2/health")
    assert headers["Strict-Transport-Security"] == "max-age=600"


async def test_hsts_max_age_zero_sends_none(tmp_path: Path) -> None:
    config = make_config(tmp_path / "site", tls_local_ca="true", hsts_max_age=0)
    headers = await https_headers(config, "/v2/health")
    assert "Strict-Transport-Security" not in headers
    assert headers["X-Content-Type-Options"] == "nosniff"


async def test_plain_http_sends_no_strict_transport_security(api: Api) -> None:
    response = await api.client.get("/v2/health")
    assert "Strict-Transport-Security" not in response.headers
    assert response.headers["X-Frame-Options"] == "DENY"
