"""The real server (create_app, as other tests use it) with its broker listening on free
loopback ports and its real device registry: devices are created, reset, suspended and
deleted through the HTTP API by an org admin, exactly as an operator would, and connect
with the credentials `POST /v2/devices` returned (API key, or the client certificate the
site CA issued). Paho clients are all stopped at the end of the test."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from edge.app import MQTT, Site, create_app
from edge.devices.directory import DeviceDirectory
from embedded_broker.broker import state_of
from embedded_broker.service import MqttService
from embedded_broker.sessions import ClientSession
from tests.conftest import Api
from tests.embedded_broker.clients import Client
from tests.factory import new_site, settings_of
from tests.ports import free_port
from tests.world import World

SCOPES = {"/sensors": {"can_publish": True, "can_subscribe": True}}
TlsFiles = tuple[Path, Path | None, Path | None]


@dataclass
class Device:
    """A device as `POST /v2/devices` made it: its ID, API key, root scope and the files of
    its client certificate and key."""

    id: str
    api_key: str
    root: str
    cert_file: Path
    key_file: Path

    @property
    def login(self) -> dict[str, str]:
        return {"username": self.id, "password": self.api_key}

    @property
    def certificate_der(self) -> bytes:
        cert = x509.load_pem_x509_certificate(self.cert_file.read_bytes())
        return cert.public_bytes(serialization.Encoding.DER)


@dataclass
class Org:
    org_id: str
    admin_token: str


@dataclass
class Harness:
    site: Site
    app_api: Api
    mqtt: MqttService
    ports: dict[str, int]
    folder: Path
    orgs: list[Org] = field(default_factory=list)
    clients: list[Client] = field(default_factory=list)

    @property
    def org_id(self) -> str:
        return self.orgs[0].org_id

    @property
    def other_org_id(self) -> str:
        return self.orgs[1].org_id

    @property
    def admin_token(self) -> str:
        return self.orgs[0].admin_token

    @property
    def directory(self) -> DeviceDirectory:
        return self.site.services.device_directory

    @property
    def ca_file(self) -> Path:
        return self.site.services.config.data_dir / "ca" / "ca.pem"

    async def call(self, method: str, path: str, **kw: Any) -> tuple[int, Any]:
        token = kw.pop("token", None) or self.admin_token
        return await self.app_api.call(method, path, token, **kw)

    async def device(
        self,
        name: str,
        scopes: dict[str, dict[str, bool]] | None = None,
        *,
        other_org: bool = False,
        **body: Any,
    ) -> Device:
        """A device created through `POST /v2/devices` by the org's admin."""
        token = self.orgs[1 if other_org else 0].admin_token
        body = {"name": name, "iot_scopes": SCOPES if scopes is None else scopes, **body}
        status, reply = await self.call("POST", "/v2/devices", token=token, json=body)
        assert status == 201, reply
        made = reply["device"]
        device = Device(made["id"], made["api_key"], made["root_scope"], Path(), Path())
        self._write_credentials(device, made["certificate"], made["private_key"])
        return device

    async def reset_api_key(self, device: Device) -> str:
        """`POST .../reset-api-key`: the device gets the new key; the old one is returned."""
        status, reply = await self.call("POST", f"/v2/devices/{device.id}/reset-api-key")
        assert status == 200, reply
        old, device.api_key = device.api_key, reply["api_key"]
        return old

    async def reset_certificate(self, device: Device) -> tuple[Path, Path]:
        """`POST .../reset-mqtt-credentials`: the device gets new certificate files; the
        old ones are returned."""
        status, reply = await self.call("POST", f"/v2/devices/{device.id}/reset-mqtt-credentials")
        assert status == 200, reply
        old = device.cert_file, device.key_file
        self._write_credentials(device, reply["certificate"], reply["private_key"])
        return old

    async def suspend(self, device: Device) -> None:
        path = f"/v2/devices/{device.id}"
        status, reply = await self.call("PATCH", path, json={"is_active": False})
        assert status == 200, reply

    async def delete(self, device: Device) -> None:
        status, reply = await self.call("DELETE", f"/v2/devices/{device.id}")
        assert status == 200, reply

    def tls(self, device: Device | None = None) -> TlsFiles:
        if device is None:
            return (self.ca_file, None, None)
        return (self.ca_file, device.cert_file, device.key_file)

    def client(self, client_id: str = "", listener: str = "mqtt", **kw: Any) -> Client:
        websockets = listener.startswith("mqtt-ws")
        if listener == "mqtt-wss":
            kw.setdefault("tls", self.tls())
        made = Client(self.ports[listener], client_id, websockets=websockets, **kw)
        self.clients.append(made)
        return made

    async def connected(self, device: Device, client_id: str = "", **kw: Any) -> Client:
        made = self.client(client_id, **device.login, **kw)
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

    def _write_credentials(self, device: Device, certificate: str, private_key: str) -> None:
        self.folder.mkdir(exist_ok=True)
        serial = x509.load_pem_x509_certificate(certificate.encode()).serial_number
        device.cert_file = self.folder / f"{device.id}-{serial:x}.pem"
        device.key_file = self.folder / f"{device.id}-{serial:x}.key"
        device.cert_file.write_text(certificate)
        device.key_file.write_text(private_key)


LISTENERS = ("mqtt", "mqtt-tls", "mqtt-ws", "mqtt-wss")
PORT_SETTINGS = {
    "mqtt": "mqtt_port",
    "mqtt-tls": "mqtt_tls_port",
    "mqtt-ws": "mqtt_ws_port",
    "mqtt-wss": "mqtt_wss_port",
}


async def start(data_dir: Path, aiohttp_client: Any, **settings: Any) -> Harness:
    """The server on `data_dir` (a site of the factory, tests/factory.py) with every
    listener on a free port, and these settings; a restart when `data_dir` was served
    before."""
    ports = {name: free_port() for name in LISTENERS}
    ports_settings = {PORT_SETTINGS[name]: port for name, port in ports.items()}
    site = new_site(data_dir, **{**ports_settings, **settings})
    app = create_app(site)
    api = Api(await aiohttp_client(app))  # starts the app, and with it the broker
    return Harness(site, api, app[MQTT], ports, data_dir.parent / f"certs-{data_dir.name}")


@pytest.fixture
async def broker(
    data_dir: Path, aiohttp_client: Any, orgs_template: World, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    """The server with its broker on the orgs of the factory, Clinic (where devices go
    unless told) and Other; settings from the test's `world` marks."""
    harness = await start(data_dir, aiohttp_client, **settings_of(request))
    orgs = orgs_template.bound(harness.site, harness.app_api)
    for tenant in (orgs.tenant, orgs.other):
        harness.orgs.append(Org(tenant.org_id, await tenant.admin_token()))
    yield harness
    harness.stop_clients()  # the app's cleanup then stops the broker and closes the database
