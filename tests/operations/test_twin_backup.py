"""A device's twin is in a backup taken while serving and comes back with `edge restore`
(docs/twins.md, "Durability, backups and the trash"), and survives a restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edge.app import create_app
from edge.ops import backup
from tests.conftest import Api
from tests.factory import new_site
from tests.tenants import new_tenant


async def test_a_twin_is_backed_up_and_restored(aiohttp_client: Any, tmp_path: Path) -> None:
    first = new_site(tmp_path / "site")
    api = Api(await aiohttp_client(create_app(first)))
    tenant = await new_tenant(first, api)
    admin = await tenant.admin_token()
    status, made = await api.call("POST", "/v2/devices", admin, json={"name": "pump"})
    assert status == 201, made
    device = made["device"]
    twin_path = f"/v2/devices/{device['id']}/twin"
    status, _ = await api.call("PATCH", twin_path, admin, json={"desired": {"speed": 4}})
    assert status == 200
    status, reported = await api.call(
        "PATCH", twin_path, device["api_key"], json={"reported": {"speed": 2}}
    )
    assert status == 200, reported
    backup.backup(tmp_path / "site", tmp_path / "copy", echo=lambda _: None)  # live
    await api.client.close()

    backup.restore(tmp_path / "copy", tmp_path / "restored", force=False, echo=lambda _: None)
    second = new_site(tmp_path / "restored")
    again = Api(await aiohttp_client(create_app(second)))
    status, body = await again.call("GET", twin_path, admin)
    assert status == 200, body
    assert body["twin"] == reported["twin"]
    assert body["twin"]["delta"] == {"speed": 4} and body["twin"]["version"] == 2
