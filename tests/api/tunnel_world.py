"""The device world (tests/api/device_world.py) with tunnels: notices to devices are kept
instead of going out over MQTT, so a test can read the device end's token."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from edge.app import Site
from tests.api import device_world
from tests.api.device_world import DeviceWorld
from tests.conftest import Api


@dataclass
class Notices:
    sent: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, device_id: str, topic: str, payload: bytes) -> int:
        self.sent.append((device_id, topic, json.loads(payload)))
        return 1

    def token_of(self, tunnel_id: str) -> str:
        for _, _, body in self.sent:
            if body.get("uuid") == tunnel_id and body["action"] == "open":
                return str(body["destination_token"])
        raise AssertionError(f"no notice for {tunnel_id}")


@dataclass
class TunnelWorld:
    devices: DeviceWorld
    notices: Notices

    async def open(self, who: str = "org_admin", target: str = "member", **body: Any) -> Any:
        body = {"services": ["SSH", "HTTP"], **body}
        status, reply = await self.devices.as_(
            who, target, "POST", f"/v2/devices/{self.devices.devices[target]}/tunnels", json=body
        )
        assert status == 201, reply
        return reply["tunnel"]


async def build(site: Site, api: Api) -> TunnelWorld:
    world = await device_world.build(site, api)
    notices = Notices()
    site.services.tunnels.notify = notices
    return TunnelWorld(world, notices)
