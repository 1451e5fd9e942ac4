"""The registry stand-in used until the device registry (edge/devices) provides the real
`ClientDirectory`: it knows no client, so every connection is refused."""

from __future__ import annotations

from edge.devices.mqtt_clients import MqttClient


class NoClients:
    def by_api_key(self, device_id: str, api_key: str) -> MqttClient | None:
        return None

    def by_certificate(self, certificate_der: bytes) -> MqttClient | None:
        return None

    def by_access_token(self, token: str) -> MqttClient | None:
        return None

    def still_allowed(self, client: MqttClient) -> bool:
        return False

    def epoch(self) -> int:
        return 0

    def seen(self, account_id: str) -> None:
        pass
