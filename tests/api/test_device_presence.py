"""Presence through a tunnel agent (docs/presence.md; #29): a device whose agent is
connected is online, also with no MQTT session, and offline once the agent goes; what the
device views show of presence, by who reads them. (MQTT sessions:
tests/embedded_broker/test_presence.py.)"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from tests.api.test_tunnel_relay import FakeAgent, http, notices
from tests.world import World

__all__ = ["http", "notices"]  # the fixtures of the relay's tests, used here too


async def online(world: World, who: str = "org_admin") -> dict[str, Any]:
    status, body = await world.call(who, "GET", f"/v2/devices/{world.id('device_member')}")
    assert status == 200, body
    device = body["device"]
    return {k: device[k] for k in ("is_online", "last_disconnect_reason") if k in device}


async def test_a_connected_tunnel_agent_makes_its_device_online(
    world: World, http: tuple[aiohttp.ClientSession, str]
) -> None:
    session, base = http
    assert await online(world) == {"is_online": False}
    opened = await world.open_tunnel()
    agent = FakeAgent(session, base, opened["uuid"], await world.destination_token(opened["uuid"]))
    await agent.start()
    for _ in range(500):  # a bound on failure only
        if (await online(world))["is_online"]:
            break
        await asyncio.sleep(0.02)
    assert await online(world) == {"is_online": True}
    await agent.stop()
    for _ in range(500):
        if not (await online(world))["is_online"]:
            break
        await asyncio.sleep(0.02)
    assert await online(world) == {"is_online": False, "last_disconnect_reason": "clean"}


@pytest.mark.parametrize("who", ["org_admin", "owner", "device_member", "org_device_perms"])
async def test_every_reader_sees_presence(world: World, who: str) -> None:
    """Admins and plain readers alike (the owner, the device itself, a reader by
    device_permissions)."""
    assert await online(world, who) == {"is_online": False}
