"""The public `cyphermed` SDK against a live server: the five tunnel operations, as an
admin, as the device itself (its API key as the SDK's token), and refused for a plain
user and an owner while `device_owners_can_tunnel` is off; the device views' open tunnels
parse as the SDK's Tunnel. The callers and the device (device_member) are the world's
(tests/world.py)."""

from __future__ import annotations

import datetime

import pytest
from cyphermed.api.devices import (
    close_all_device_tunnels,
    close_device_tunnel_by_id,
    get_device_by_id,
    get_device_tunnel_by_id,
    get_device_tunnels,
    open_device_tunnel,
)
from cyphermed.errors import UnexpectedStatus
from cyphermed.models import (
    AdminDeviceInfo,
    CreateTunnelBody,
    NewTunnelInfo,
    Success,
    TunnelInfo,
    TunnelList,
)

from tests.sdk.test_sdk_devices import attempt, sdk
from tests.world import Notices, World


@pytest.fixture(autouse=True)
def notices(base_url: str, world: World) -> Notices:
    """The notices to devices, kept instead of going out over MQTT (once the app is made:
    making it sets where they go)."""
    return world.keep_notices()


async def test_tunnel_flows_through_the_sdk(base_url: str, world: World, notices: Notices) -> None:
    admin = await world.token("org_admin")
    member = world.id("device_member")
    body = CreateTunnelBody(services=["SSH", "HTTP"], timeout=30)
    made = await sdk(
        base_url, admin, lambda c: open_device_tunnel.sync(member, client=c, body=body)
    )
    assert isinstance(made, NewTunnelInfo)
    assert made.tunnel.timeout == 30 and made.tunnel.client_access_token.startswith("etc_")
    uuid = made.tunnel.uuid
    assert [(n[0], n[2]["action"], n[2]["uuid"]) for n in notices.sent] == [(member, "open", uuid)]

    listed = await sdk(base_url, admin, lambda c: get_device_tunnels.sync(member, client=c))
    assert isinstance(listed, TunnelList) and [t.uuid for t in listed.tunnels] == [uuid]
    tunnel = listed.tunnels[0]
    assert tunnel.timeout == 30 * 60 and tunnel.opened_by == world.tenant.admin_id
    assert isinstance(tunnel.opened_date, datetime.datetime)
    one = await sdk(base_url, admin, lambda c: get_device_tunnel_by_id.sync(member, uuid, client=c))
    assert isinstance(one, TunnelInfo) and one.tunnel.uuid == uuid

    device = await sdk(base_url, admin, lambda c: get_device_by_id.sync(member, client=c))
    assert isinstance(device, AdminDeviceInfo)
    assert [t.uuid for t in device.device.open_tunnels] == [uuid]

    # The device itself reads and closes its tunnels with its API key.
    own_key = world.keys["device_member"]
    mine = await sdk(base_url, own_key, lambda c: get_device_tunnels.sync(member, client=c))
    assert [t.uuid for t in mine.tunnels] == [uuid]
    done = await sdk(
        base_url, own_key, lambda c: close_device_tunnel_by_id.sync(member, uuid, client=c)
    )
    assert isinstance(done, Success)
    status, _ = await attempt(
        base_url, admin, lambda c: get_device_tunnel_by_id.sync(member, uuid, client=c)
    )
    assert status == 404

    for _ in range(2):
        await sdk(base_url, admin, lambda c: open_device_tunnel.sync(member, client=c, body=body))
    done = await sdk(base_url, admin, lambda c: close_all_device_tunnels.sync(member, client=c))
    assert isinstance(done, Success)
    listed = await sdk(base_url, admin, lambda c: get_device_tunnels.sync(member, client=c))
    assert listed.tunnels == []


@pytest.mark.parametrize(
    ("who", "status"), [("plain", 404), ("owner", 403), ("org_device_perms", 403)]
)
async def test_the_sdk_is_refused_without_the_right(
    base_url: str, world: World, who: str, status: int
) -> None:
    token = await world.token(who)
    member = world.id("device_member")
    body = CreateTunnelBody(services=["SSH"])
    got, _ = await attempt(
        base_url, token, lambda c: open_device_tunnel.sync(member, client=c, body=body)
    )
    assert got == status
    with pytest.raises(UnexpectedStatus):
        await sdk(base_url, token, lambda c: close_all_device_tunnels.sync(member, client=c))
