"""A device's twin requests over MQTT, answered by the server (docs/twins.md).

The broker hands this inbox what a device publishes on its own `twin/get` and
`twin/update` (embedded_broker/inbox.py; the topic ACL already refused anyone else's
publish there) and tells it when a session of the device subscribes to its
`twin/update/delta`, or comes back holding that subscription: then the device gets the
delta at once, so one that was offline catches up. The answer goes to the device's own
sessions only, after the update is durable; the broker acknowledges the request after
that.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from edge.devices.mqtt_clients import MqttClient
from edge.kernel import errors, json_text
from edge.twins import topics
from edge.twins.twins import Twins, parse, view
from storage import devices as device_store
from storage.records import Device

log = logging.getLogger("edge.twins")
# The code of a rejection, as the HTTP status of the same refusal would be.
CODES: tuple[tuple[type[errors.EdgeError], int], ...] = (
    (errors.ValidationError, 400),
    (errors.Denied, 403),
    (errors.NotFound, 404),
    (errors.SchemaError, 406),
    (errors.Conflict, 409),
    (errors.TooLarge, 413),
)


class TwinInbox:
    def __init__(self, twins: Twins) -> None:
        self._twins = twins

    def _own(self, client: MqttClient) -> str | None:
        """The base of the client's twin topics, when it is a device."""
        return client.own_topic(topics.TWIN)

    def takes(self, client: MqttClient, topic: str) -> bool:
        """Whether a publish is a twin request of the device's own (not routed on)."""
        own = self._own(client)
        return own is not None and topic in (f"{own}/{topics.GET}", f"{own}/{topics.UPDATE}")

    def watches(self, client: MqttClient) -> Sequence[str]:
        own = self._own(client)
        return () if own is None else (f"{own}/{topics.DELTA}",)

    def subscribed(self, client: MqttClient, topic: str, sent: int | None) -> int | None:
        """The delta, unless this connection of the session was sent it at this version
        (`sent`) already: a SUBSCRIBE repeated in a loop costs no delta."""
        device = self._device(client)
        if device is None:
            return sent
        twin = self._twins.current(device.id)
        if twin.version != sent:
            self._twins.send_delta(device, twin)
        return twin.version

    async def receive(self, client: MqttClient, topic: str, payload: bytes) -> None:
        own, token = self._own(client) or "", None
        action = topics.GET if topic.endswith(f"/{topics.GET}") else topics.UPDATE
        try:
            body = _body(payload)
            token = body.get("client_token")
            reply = await self._answer(client, action, body)
            self._reply(client, f"{own}/{action}/accepted", topics.accepted(reply, token))
        except errors.EdgeError as exc:
            rejected = topics.rejected(_code(exc), exc.message, token)
            self._reply(client, f"{own}/{action}/rejected", rejected)
        except Exception:
            log.exception("twin %s of device %s failed", action, client.account_id)
            failed = topics.rejected(500, "Internal error: the request was not applied", token)
            self._reply(client, f"{own}/{action}/rejected", failed)

    async def _answer(self, client: MqttClient, action: str, body: dict[str, Any]) -> Any:
        device = self._device(client)
        if device is None:
            raise errors.NotFound("Device not found")
        if action == topics.GET:
            return view(self._twins.current(device.id))
        update = parse(body)
        if "desired" in update.patches:
            raise errors.Denied("A device reports its state: desired is set by others")
        return view(await self._twins.apply(device, update))

    def _device(self, client: MqttClient) -> Device | None:
        device = self._twins.db.read(lambda c: device_store.get(c, client.account_id))
        return device if device is not None and device.is_active else None

    def _reply(self, client: MqttClient, topic: str, payload: bytes) -> None:
        if self._twins.notify is not None:
            self._twins.notify(client.account_id, topic, payload)


def _body(payload: bytes) -> dict[str, Any]:
    """A request's JSON object; an empty `get` is `{}`."""
    if not payload.strip():
        return {}
    body = json_text.parse(payload, field="payload")
    if not isinstance(body, dict):
        raise errors.SchemaError("payload: must be a JSON object")
    return body


def _code(exc: errors.EdgeError) -> int:
    for cls, code in CODES:
        if isinstance(exc, cls):
            return code
    return 400
