"""HTTPS: a certificate from the site's own CA, or the operator's own certificate and key."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from edge.app import create_app, open_site
from edge.config import ConfigError
from edge.ops import ca, tls
from tests.conftest import make_config


async def get_health(config: Any, trust: Path | None) -> int:
    site = open_site(config)
    runner = web.AppRunner(create_app(site))
    await runner.setup()
    server = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls.server_context(config))
    await server.start()
    port = server._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    client_ssl = (
        ssl.create_default_context(cafile=str(trust)) if trust else ssl.create_default_context()
    )
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"https://localhost:{port}/v2/health", ssl=client_ssl) as r:
                return r.status
    finally:
        await runner.cleanup()


async def test_local_ca_certificate_is_trusted_through_ca_pem(tmp_path: Path) -> None:
    config = make_config(tmp_path / "site", tls_local_ca="true")
    assert config.base_url.startswith("https://")
    assert await get_health(config, tmp_path / "site" / "ca" / "ca.pem") == 200
    assert (tmp_path / "site" / "ca" / "server.key").stat().st_mode & 0o077 == 0


async def test_untrusted_clients_are_refused(tmp_path: Path) -> None:
    config = make_config(tmp_path / "site", tls_local_ca="true")
    with pytest.raises(aiohttp.ClientConnectorCertificateError):
        await get_health(config, None)


async def test_operator_certificate_and_key(tmp_path: Path) -> None:
    issued = ca.server_certificate(tmp_path / "elsewhere", ["localhost"])
    config = make_config(tmp_path / "site", tls_cert=issued.cert, tls_key=issued.key)
    assert await get_health(config, issued.ca) == 200


def test_certificate_and_key_go_together(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="tls_key"):
        make_config(tmp_path / "site", tls_cert=tmp_path / "cert.pem")


def test_server_certificate_is_reissued_for_new_names(tmp_path: Path) -> None:
    first = ca.server_certificate(tmp_path, ["localhost"])
    before = first.cert.read_bytes()
    assert ca.server_certificate(tmp_path, ["localhost"]).cert.read_bytes() == before
    assert ca.server_certificate(tmp_path, ["localhost", "edge.lan"]).cert.read_bytes() != before
