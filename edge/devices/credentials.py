"""What a device authenticates with: its API key (shown once, stored as a hash) and the
MQTT credentials the site CA issues, with where to use them.

API keys are 256 random bits behind the prefix `edk_`, so a bearer token can be told to be
a device key without a lookup (and secret scanners can spot a leaked one). They are
stored as their SHA-256: a key that random cannot be guessed from its hash, so a slow
password hash would only slow down every request of the fast path.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from edge.auth import bearer
from edge.auth.bearer import API_KEY_PREFIX
from edge.certificates.ca import ClientCredentials
from edge.devices.topics import root_scope
from storage.records import Device

KEY_PREFIX = API_KEY_PREFIX  # bearer.py tells keys from other bearers by it
KEY_BYTES = 32
ROOT_CA_PATH = "/v2/devices/root-ca.pem"


def new_api_key() -> tuple[str, str]:
    """A fresh key and the hash that is stored in its place."""
    key = KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)
    return key, key_hash(key)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


is_api_key = bearer.is_api_key


def matches(key: str, stored_hash: str | None) -> bool:
    """Constant-time comparison of a presented key with a stored hash."""
    if stored_hash is None:
        return False
    return hmac.compare_digest(key_hash(key).encode(), stored_hash.encode())


@dataclass(frozen=True)
class Endpoints:
    """Where devices fetch the CA certificate (a URL) and reach the broker (a host name)."""

    root_ca: str
    broker: str

    @classmethod
    def of(cls, base_url: str, broker_host: str) -> Endpoints:
        return cls(base_url.rstrip("/") + ROOT_CA_PATH, broker_host)


def mqtt_credentials(device: Device, issued: ClientCredentials, where: Endpoints) -> dict[str, Any]:
    """The interface's NewMqttCredentials (also the MQTT half of NewDeviceSchema)."""
    return {
        "certificate": issued.certificate,
        "root_ca": where.root_ca,
        "public_key": issued.public_key,
        "private_key": issued.private_key,
        "broker": where.broker,
        "root_scope": root_scope(device.org_id, device.project_id),
    }


def new_device_info(
    device: Device, api_key: str, issued: ClientCredentials, where: Endpoints
) -> dict[str, Any]:
    """The interface's NewDeviceSchema: everything the device needs, shown this once."""
    out = {"id": device.id, "api_key": api_key, **mqtt_credentials(device, issued, where)}
    if device.owner_id is not None:
        out["owner_id"] = device.owner_id
    return out
