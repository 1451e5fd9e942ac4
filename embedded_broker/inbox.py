"""The server's own inbox on devices' topics: requests a device publishes to the server
(its twin's `get` and `update`, edge/twins/inbox.py) are handed to the service that
answers them instead of being routed to subscribers, and the publisher's acknowledgement
waits until that service is done (an update is durable before it is acknowledged). An
inbox also names topics it `watches`: when a session of the device subscribes to one
(or comes back holding such a subscription), the inbox is told, so it can send what waits
there (a twin's delta, queued commands). A `RoomWaiter` is told when a session that
refused a server message for want of room has room again (queued commands).

The services live in `edge/` and know nothing of the broker: they meet this protocol by
shape; `edge/app.py` hands them to the broker (`MqttService.add_inbox`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from edge.devices.mqtt_clients import MqttClient
from embedded_broker import acl

log = logging.getLogger("edge.mqtt")


class Inbox(Protocol):
    def takes(self, client: MqttClient, topic: str) -> bool:
        """Whether this publish (already allowed by the ACL) is a request to the server."""
        ...

    async def receive(self, client: MqttClient, topic: str, payload: bytes) -> None:
        """Answer the request; it never raises (a failure is the inbox's to report)."""
        ...

    def watches(self, client: MqttClient) -> Sequence[str]:
        """The topics whose subscription by this client the inbox wants to hear of."""
        ...

    def subscribed(self, client: MqttClient, topic: str, sent: int | None) -> int | None:
        """A session of the client now holds a subscription matching a watched topic.
        `sent`: what this returned the last time for the same session, connection and
        topic (None the first time); the answer is kept for the next time. So the inbox
        can send what waits once per version of it, not once per SUBSCRIBE."""
        ...


class RoomWaiter(Protocol):
    def room(self, client: MqttClient) -> None:
        """A session of the client that refused a server message for want of room (a
        queued command offered with `notify_spare`) has room again: its queue has gone
        out. So what still waits is offered then, not by polling."""
        ...


class Inboxes:
    def __init__(self) -> None:
        self.inboxes: list[Inbox] = []
        self.waiters: list[RoomWaiter] = []  # told when a session has room again

    def taking(self, client: MqttClient, topic: str) -> Inbox | None:
        for inbox in self.inboxes:
            if inbox.takes(client, topic):
                return inbox
        return None

    def subscribed(
        self, client: MqttClient, filters: Sequence[str], told: dict[str, int | None]
    ) -> None:
        """Tell each inbox of the watched topics these new filters match; `told` holds
        what each answered before for this session's connection (ClientSession.told)."""
        for inbox in self.inboxes:
            for topic in inbox.watches(client):
                if any(acl.filter_matches(f, topic) for f in filters):
                    try:
                        told[topic] = inbox.subscribed(client, topic, told.get(topic))
                    except Exception:  # the subscription stands whatever the inbox does
                        log.exception("mqtt: the server's answer to a subscription failed")

    def room(self, client: MqttClient) -> None:
        """Tell each waiter that a session of this client has room again."""
        for waiter in self.waiters:
            try:
                waiter.room(client)
            except Exception:  # the acknowledgement stands whatever the inbox does
                log.exception("mqtt: the server's answer to a session's room failed")
