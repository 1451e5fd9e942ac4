"""The real server (create_app, as other tests use it) with its broker listening on free
loopback ports, the registry stand-in in place of the device registry, and paho clients
that are all stopped at the end of the test."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from edge.app import MQTT, Site, create_app, open_site
from embedded_broker.broker import state_of
from embedded_broker.service import MqttService
from embedded_broker.sessions import ClientSession
from tests.conftest import make_config
from tests.embedded_broker.clients import Client
from tests.embedded_broker.registry import FakeDevice, FakeDirectory

ORG = "org0000000000001"
SCOPES = {"/sensors": {"can_publish": True, "can_subscribe": True}}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Harness:
    site: Site
    mqtt: MqttService
    directory: FakeDirectory
    ports: dict[str, int]
    clients: list[Client] = field(default_factory=list)

    def device(
        self, device_id: str, scopes: dict[str, dict[str, bool]] | None = None, **kw: Any
    ) -> FakeDevice:
        api_key = f"key-of-{device_id}"
        return self.directory.add(
            FakeDevice(
                device_id,
                kw.pop("org_id", ORG),
                kw.pop("project_id", None),
                api_key,
                SCOPES if scopes is None else scopes,
                **kw,
            )
        )

    def client(self, client_id: str = "", listener: str = "mqtt", **kw: Any) -> Client:
        made = Client(self.ports[listener], client_id, websockets=listener == "mqtt-ws", **kw)
        self.clients.append(made)
        return made

    async def connected(self, device: FakeDevice, client_id: str = "", **kw: Any) -> Client:
        made = self.client(client_id, username=device.device_id, password=device.api_key, **kw)
        code, _ = await made.connect()
        assert code == 0
        return made

    def session(self, account_id: str, client_id: str) -> ClientSession | None:
        """The broker's state of a session, by the account and the client ID it chose."""
        assert self.mqtt.broker is not None
        entry = self.mqtt.broker.sessions.get(f"{account_id}:{client_id}")
        return None if entry is None else state_of(entry[0])

    async def until(self, condition: Callable[[], bool]) -> None:
        """Wait for something the broker does on its own (a bound on failure, no timing)."""
        for _ in range(750):
            if condition():
                return
            await asyncio.sleep(0.02)
        raise AssertionError("the broker never got there")

    def stop_clients(self) -> None:
        for made in self.clients:
            made.stop()

    @property
    def stats(self) -> Any:
        return self.mqtt.stats


async def start(data_dir: Path, aiohttp_client: Any, **settings: Any) -> Harness:
    ports = {"mqtt": free_port(), "mqtt-tls": free_port(), "mqtt-ws": free_port()}
    config = make_config(
        data_dir,
        mqtt_port=ports["mqtt"],
        mqtt_tls_port=ports["mqtt-tls"],
        mqtt_ws_port=ports["mqtt-ws"],
        **settings,
    )
    site = open_site(config)
    directory = FakeDirectory()
    site.services.mqtt_directory = directory
    app = create_app(site)
    await aiohttp_client(app)  # starts the app, and with it the broker
    return Harness(site, app[MQTT], directory, ports)


@pytest.fixture
def broker_settings() -> dict[str, Any]:
    return {}


@pytest.fixture
async def broker(
    data_dir: Path, aiohttp_client: Any, broker_settings: dict[str, Any]
) -> AsyncIterator[Harness]:
    harness = await start(data_dir, aiohttp_client, **broker_settings)
    yield harness
    harness.stop_clients()  # the app's cleanup then stops the broker and closes the database
