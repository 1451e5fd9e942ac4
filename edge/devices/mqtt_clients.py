"""What the MQTT broker asks about a connecting client: the contract between the device
registry (this room) and `embedded_broker/`.

The broker authenticates a connection one of three ways (a device's client certificate
over TLS; username = device ID and password = API key; a user's access token as the
password of a user tool), keeps the `MqttClient` it was given for the connection's life,
and checks every PUBLISH and SUBSCRIBE against its `rights`. When `epoch()` moves, some
client's standing may have changed (an API key or certificate reset, a device suspended
or deleted, a session revoked): the broker then asks `still_allowed` for each live
connection and drops those that are not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from edge.devices.topics import TopicRights, own_topic
from edge.kernel.principal import Principal

ClientKind = Literal["device", "user"]
Credential = Literal["api_key", "certificate", "token"]


@dataclass(frozen=True)
class MqttClient:
    kind: ClientKind
    account_id: str
    org_id: str
    root_scope: str
    rights: TopicRights
    credential: Credential
    # What the credential was when checked (a key's last change, a certificate's serial,
    # a session ID): `still_allowed` compares it with the registry's current one.
    stamp: str
    name: str = ""  # the device's name or the user's username, for the broker's log

    def own_topic(self, *below: str) -> str | None:
        """A device's topic under its own namespace (its requests to the server come
        there); None for a user tool, which has none."""
        if self.kind != "device":
            return None
        return own_topic(self.root_scope, self.account_id, *below)

    def principal(self) -> Principal:
        """Who the client acts as, for the rules outside the broker (whether it may read
        a data path), as its HTTP calls would: a device in its org (its home project is
        no scope: edge/devices/keys.py), a user tool in the project its token is scoped
        to, if any (its root names it)."""
        if self.kind == "device":
            return Principal("device", self.account_id, None, self.org_id)
        _, _, project_id = self.root_scope.partition("/")
        return Principal("user", self.account_id, self.stamp, self.org_id, project_id or None)


class ClientDirectory(Protocol):
    def by_api_key(self, device_id: str, api_key: str) -> MqttClient | None:
        """A device signing in with its ID as username and its API key as password."""
        ...

    def by_certificate(self, certificate_der: bytes) -> MqttClient | None:
        """A device presenting a client certificate the site CA issued and that is still
        registered (not reset, the device active)."""
        ...

    def by_access_token(self, token: str) -> MqttClient | None:
        """A user tool: a user's access token as the password; None unless the user's
        device permissions give it some topic rights."""
        ...

    def still_allowed(self, client: MqttClient) -> bool: ...

    def resume(self, kind: str, account_id: str, credential: str, stamp: str) -> MqttClient | None:
        """The client of a persistent session read back after a restart (its owner, the
        credential it connected with and that credential's stamp), with its current
        rights; None when that credential would no longer be allowed."""
        ...

    def epoch(self) -> int:
        """Moves whenever any client's standing may have changed (one point read)."""
        ...

    def seen(self, account_id: str) -> None:
        """Record activity for `last_seen` (batched: no write per message)."""
        ...

    def refused(self, address: str, username: str | None) -> None:
        """A connection whose credentials did not open, for the audit log (aggregated:
        one event per address and user name per minute, with a count)."""
        ...
