"""HTTPS: a certificate from the site's own CA, or the operator's own certificate and key."""

from __future__ import annotations

import asyncio
import socket
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from cryptography import x509

from edge.app import create_app, open_site
from edge.certificates import ca
from edge.ops import tls
from tests.conftest import make_config
from tests.ports import free_port


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


def _mqtt_tls_handshake(port: int, name: str, ca_file: Path) -> set[str]:
    """The names of the broker's certificate, after a handshake that checked it for `name`
    (as a device given that broker host does)."""
    context = ssl.create_default_context(cafile=str(ca_file))
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        with context.wrap_socket(raw, server_hostname=name) as tls_sock:
            der = tls_sock.getpeercert(binary_form=True)
    assert der is not None
    cert = x509.load_der_x509_certificate(der)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {str(n.value) for n in names}


async def test_following_public_url_on_the_lan_gives_devices_a_certificate_for_it(
    tmp_path: Path, aiohttp_client: Any
) -> None:
    """docs/operating.md, "On the LAN": devices are given the public URL's host as their
    broker; the MQTT/TLS certificate now names it (it named only localhost)."""
    port = free_port()
    config = make_config(
        tmp_path / "site", public_url="http://edge.plant.test:8080", mqtt_tls_port=port
    )
    assert config.broker_host == "edge.plant.test"
    site = open_site(config)
    await aiohttp_client(create_app(site))  # starts the broker
    ca_file = tmp_path / "site" / "ca" / "ca.pem"
    names = await asyncio.to_thread(_mqtt_tls_handshake, port, "edge.plant.test", ca_file)
    assert {"edge.plant.test", "localhost", "127.0.0.1"} <= names
    assert tls.mismatches(config) == []
