"""Presence through a tunnel agent (docs/presence.md; #29): a device whose agent is
connected is online, also with no MQTT session, and offline once the agent goes; what the
device views show of presence, by who reads them. (MQTT sessions:
tests/embedded_broker/test_presence.py.)"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from cyphermed.models import AdminDeviceSchema, DeviceSchema

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


PRESENCE = {"is_online", "connected_since", "last_disconnect_reason"}


async def test_the_document_declares_presence_as_extensions_of_the_device_models(
    world: World,
) -> None:
    """Declared, marked edge's own, never required (a client of the interface keeps them
    as additional properties), and the list's `is_online` filter is a boolean parameter."""
    status, document = await world.call("anonymous", "GET", "/v2/openapi.json")
    assert status == 200
    for name in ("DeviceSchema", "AdminDeviceSchema"):
        schema = document["components"]["schemas"][name]
        declared = {k for k, v in schema["properties"].items() if v.get("x-edge-extension")}
        assert declared == PRESENCE, name
        assert not PRESENCE & set(schema["required"]), name
    reasons = document["components"]["schemas"]["DeviceSchema"]["properties"]
    assert set(reasons["last_disconnect_reason"]["enum"]) >= {"clean", "keepalive_timeout"}
    parameters = document["paths"]["/v2/devices"]["get"]["parameters"]
    assert {"name": "is_online", "in": "query"}.items() <= _named(parameters, "is_online").items()
    assert _named(parameters, "is_online")["schema"]["type"] == "boolean"


def _named(parameters: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(p for p in parameters if p["name"] == name)


async def test_the_sdk_keeps_presence_as_additional_properties(world: World) -> None:
    """The SDK's models parse a device with presence unchanged: its own fields as before,
    presence in `additional_properties`."""
    presence = world.site.services.devices.presence
    presence.opened(world.id("device_member"), world.tenant.org_id)
    presence.closed(world.id("device_member"), world.tenant.org_id, "keepalive_timeout")
    for who, model in (("org_admin", AdminDeviceSchema), ("device_member", DeviceSchema)):
        for _ in range(500):  # presence is written in the background; a bound on failure
            status, body = await world.call(who, "GET", f"/v2/devices/{world.id('device_member')}")
            if body["device"].get("last_disconnect_reason"):
                break
            await asyncio.sleep(0.02)
        assert status == 200, body
        parsed = model.from_dict(body["device"])
        assert parsed.id == world.id("device_member")
        assert parsed.additional_properties["is_online"] is False
        assert parsed.additional_properties["last_disconnect_reason"] == "keepalive_timeout"
