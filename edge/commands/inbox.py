"""A device's replies to commands over MQTT, taken by the server (docs/commands.md).

The broker hands this inbox what a device publishes on its own
`<root>/devices/<device_id>/commands/<request_id>/reply` (embedded_broker/inbox.py; the
topic ACL already refused anyone else's publish there): the reply is recorded before the
device's PUBACK, and the HTTP caller waiting for it gets it. The same inbox protocol
carries twin requests (edge/twins/inbox.py); replies are never routed to subscribers.

It also starts the delivery of queued commands when a session of the device subscribes to
its commands (or comes back holding that subscription), and when a session that had no
room for them has room again (the device's presence starts it too): no poll.
"""

from __future__ import annotations

from collections.abc import Sequence

from edge.commands.messages import COMMANDS, REPLY
from edge.commands.service import Commands
from edge.devices.mqtt_clients import MqttClient

# Stands for any request ID: a filter that matches it (`commands/+`, `commands/#`) takes
# every command; no request ID is this (they are generated IDs).
WATCHED = "-"


class CommandInbox:
    def __init__(self, commands: Commands) -> None:
        self._commands = commands

    def takes(self, client: MqttClient, topic: str) -> bool:
        return is_reply(client, topic)

    async def receive(self, client: MqttClient, topic: str, payload: bytes) -> None:
        await self._commands.reply(client.account_id, topic, payload)

    def watches(self, client: MqttClient) -> Sequence[str]:
        """A command's topic: a session of the device that subscribes to its commands
        (or comes back holding that subscription) is offered what is queued for it."""
        own = client.own_topic(COMMANDS)
        return () if own is None else (f"{own}/{WATCHED}",)

    def subscribed(self, client: MqttClient, topic: str, sent: int | None) -> int | None:
        self._commands.offer_queued(client.account_id)
        return None

    def room(self, client: MqttClient) -> None:
        """The device's session has room again: what is still queued goes out now."""
        self._commands.offer_queued(client.account_id)


def is_reply(client: MqttClient, topic: str) -> bool:
    """Whether a publish is a reply of the device's own: `.../commands/<id>/reply`."""
    own = client.own_topic(COMMANDS)
    if own is None or not topic.startswith(own + "/"):
        return False
    rest = topic[len(own) + 1 :].split("/")
    return len(rest) == 2 and rest[0] != "" and rest[1] == REPLY
