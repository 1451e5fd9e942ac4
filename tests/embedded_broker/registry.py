"""A stand-in for the device registry (edge/devices implements the real ClientDirectory):
devices and user tokens held in memory, whose state a test flips before moving the epoch,
as the registry does when a key or certificate is reset or a device suspended.

Used until the registry is merged; the broker sees only the ClientDirectory contract.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from edge.devices.mqtt_clients import Credential, MqttClient
from edge.devices.topics import TopicRights, device_rights, root_scope, scope_rights


@dataclass
class FakeDevice:
    device_id: str
    org_id: str
    project_id: str | None
    api_key: str
    scopes: dict[str, dict[str, bool]]
    certificate_der: bytes | None = None
    key_version: int = 1
    suspended: bool = False
    deleted: bool = False

    @property
    def root(self) -> str:
        return root_scope(self.org_id, self.project_id)

    @property
    def rights(self) -> TopicRights:
        return device_rights(self.root, self.device_id, self.scopes)


@dataclass
class FakeDirectory:
    devices: dict[str, FakeDevice] = field(default_factory=dict)
    tokens: dict[str, MqttClient] = field(default_factory=dict)
    seen_accounts: set[str] = field(default_factory=set)
    revoked_sessions: set[str] = field(default_factory=set)
    _epoch: int = 0

    def add(self, device: FakeDevice) -> FakeDevice:
        self.devices[device.device_id] = device
        return device

    def add_user_token(self, token: str, user_id: str, org_id: str, session_id: str) -> None:
        rights = scope_rights(publish=[org_id], subscribe=[org_id])
        client = MqttClient("user", user_id, org_id, org_id, rights, "token", session_id)
        self.tokens[token] = client

    def move(self) -> None:
        """What the registry does after any change of standing: the epoch moves."""
        self._epoch += 1

    def by_api_key(self, device_id: str, api_key: str) -> MqttClient | None:
        device = self._active(device_id)
        if device is None or api_key != device.api_key:
            return None
        return self._client(device, "api_key", f"key-{device.key_version}")

    def by_certificate(self, certificate_der: bytes) -> MqttClient | None:
        for device in self.devices.values():
            if device.certificate_der == certificate_der and self._active(device.device_id):
                return self._client(device, "certificate", certificate_der.hex()[-16:])
        return None

    def by_access_token(self, token: str) -> MqttClient | None:
        client = self.tokens.get(token)
        return None if client is None or client.stamp in self.revoked_sessions else client

    def still_allowed(self, client: MqttClient) -> bool:
        if client.kind == "user":
            return client.stamp not in self.revoked_sessions
        device = self._active(client.account_id)
        if device is None:
            return False
        if client.credential == "api_key":
            return client.stamp == f"key-{device.key_version}"
        der = device.certificate_der
        return der is not None and client.stamp == der.hex()[-16:]

    def epoch(self) -> int:
        return self._epoch

    def seen(self, account_id: str) -> None:
        self.seen_accounts.add(account_id)

    def _active(self, device_id: str) -> FakeDevice | None:
        device = self.devices.get(device_id)
        return None if device is None or device.suspended or device.deleted else device

    @staticmethod
    def _client(device: FakeDevice, credential: Credential, stamp: str) -> MqttClient:
        return MqttClient(
            "device", device.device_id, device.org_id, device.root, device.rights, credential, stamp
        )
