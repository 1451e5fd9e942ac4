"""A device registry for the MQTT benchmark, until the real one (edge/devices) is merged:
devices with hashed API keys and client certificates, their rights from
edge/devices/topics.py, so the broker runs its whole authentication and ACL path.

The device list is a JSON file the benchmark writes: [{"id", "org", "key", "cert"}] where
"cert" is a PEM file name or null. Every device may publish and subscribe under
`<org>/bench`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from edge.devices.mqtt_clients import Credential, MqttClient
from edge.devices.topics import device_rights

SCOPES = {"/bench": {"can_publish": True, "can_subscribe": True}}


@dataclass(frozen=True)
class BenchDevice:
    device_id: str
    org_id: str
    key_hash: bytes
    certificate_der: bytes | None


class BenchDirectory:
    def __init__(self, devices: list[BenchDevice]) -> None:
        self._by_id = {d.device_id: d for d in devices}
        self._by_cert = {d.certificate_der: d for d in devices if d.certificate_der}

    @classmethod
    def from_file(cls, path: Path) -> BenchDirectory:
        devices = []
        for entry in json.loads(path.read_text()):
            der = None
            if entry["cert"]:
                pem = Path(entry["cert"]).read_bytes()
                der = x509.load_pem_x509_certificate(pem).public_bytes(Encoding.DER)
            digest = hashlib.sha256(entry["key"].encode()).digest()
            devices.append(BenchDevice(entry["id"], entry["org"], digest, der))
        return cls(devices)

    def by_api_key(self, device_id: str, api_key: str) -> MqttClient | None:
        device = self._by_id.get(device_id)
        digest = hashlib.sha256(api_key.encode()).digest()
        if device is None or not hmac.compare_digest(digest, device.key_hash):
            return None
        return _client(device, "api_key")

    def by_certificate(self, certificate_der: bytes) -> MqttClient | None:
        device = self._by_cert.get(certificate_der)
        return None if device is None else _client(device, "certificate")

    def by_access_token(self, token: str) -> MqttClient | None:
        return None

    def still_allowed(self, client: MqttClient) -> bool:
        return client.account_id in self._by_id

    def epoch(self) -> int:
        return 0

    def seen(self, account_id: str) -> None:
        pass


def _client(device: BenchDevice, credential: Credential) -> MqttClient:
    rights = device_rights(device.org_id, device.device_id, SCOPES)
    return MqttClient(
        "device", device.device_id, device.org_id, device.org_id, rights, credential, "1"
    )
