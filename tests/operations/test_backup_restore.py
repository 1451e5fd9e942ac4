"""Backup while serving, restore elsewhere: the same accounts, passwords, refresh tokens,
and access tokens signed before the backup still verify."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from edge.app import create_app
from edge.ops import backup
from storage import device_certificates as certificates
from tests.conftest import STAFF_PASSWORD, Api
from tests.factory import new_site
from tests.tenants import PASSWORD, new_tenant


async def test_restored_site_serves_the_same_accounts_and_tokens(
    aiohttp_client: Any, tmp_path: Path
) -> None:
    first = new_site(tmp_path / "site")
    api = Api(await aiohttp_client(create_app(first)))
    tenant = await new_tenant(first, api)
    status, staff = await api.call(
        "POST",
        "/v2/auth/token",
        data={"grant_type": "password", "username": "admin", "password": STAFF_PASSWORD},
    )
    assert status == 201
    status, user = await api.call(
        "POST",
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": tenant.admin_email,
            "password": PASSWORD,
            "client_id": tenant.alias,
        },
    )
    assert status == 201
    lines: list[str] = []
    summary = backup.backup(tmp_path / "site", tmp_path / "copy", echo=lines.append)  # live
    assert summary.files >= 3 and any("database: 100%" in line for line in lines)
    await api.client.close()

    restored = tmp_path / "restored"
    backup.restore(tmp_path / "copy", restored, force=False, echo=lines.append)
    second = new_site(restored)
    again = Api(await aiohttp_client(create_app(second)))
    status, body = await again.call("GET", f"/v2/orgs/{tenant.org_id}", staff["access_token"])
    assert status == 200 and body["org"]["alias"] == tenant.alias  # old access token verifies
    status, refreshed = await again.call(
        "POST",
        "/v2/auth/token",
        data={"grant_type": "refresh_token", "refresh_token": user["refresh_token"]},
    )
    assert status == 201  # old refresh token works
    assert await again.token(tenant.admin_email, PASSWORD, client_id=tenant.alias)
    assert await again.token()  # the staff password too


async def test_the_certificate_registry_comes_back_with_its_statuses(
    aiohttp_client: Any, tmp_path: Path
) -> None:
    """A restored site refuses what the site refused (superseded, revoked) and accepts the
    certificate in force: the registry and the CA travel together (#32)."""
    first = new_site(tmp_path / "site")
    api = Api(await aiohttp_client(create_app(first)))
    tenant = await new_tenant(first, api)
    token = await api.token(tenant.admin_email, PASSWORD, client_id=tenant.alias)
    status, made = await api.call("POST", "/v2/devices", token, json={"name": "pump"})
    assert status == 201, made
    device_id = made["device"]["id"]
    superseded = made["device"]["certificate"]
    path = f"/v2/devices/{device_id}/reset-mqtt-credentials"
    status, current = await api.call("POST", path, token)
    assert status == 200
    before = first.services.db.read(lambda c: certificates.of_device(c, device_id))
    backup.backup(tmp_path / "site", tmp_path / "copy", echo=lambda _: None)
    await api.client.close()

    backup.restore(tmp_path / "copy", tmp_path / "restored", force=False, echo=lambda _: None)
    second = new_site(tmp_path / "restored")
    assert second.services.db.read(lambda c: certificates.of_device(c, device_id)) == before
    logins = second.services.certificate_logins
    assert logins.accepted(_der(superseded)) is None
    assert logins.accepted(_der(current["certificate"])) is not None


def _der(pem: str) -> bytes:
    cert = x509.load_pem_x509_certificate(pem.encode())
    return cert.public_bytes(serialization.Encoding.DER)
