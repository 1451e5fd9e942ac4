"""The feed's data changes as MQTT messages (docs/mqtt.md, "Data changes"): each change to
an entry is published on `<org_id>/groups/<group_id>/data/<path>`, to each subscribed
session only where its account may read the path (`Readable.may_read`, the one decision),
whatever its topic rights say. The broker is handed in as a callable by the composition
root (the broker never imports this room).

The payload is what changed, never the value, as the SSE streams tell it (docs/events.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from edge.devices.mqtt_clients import MqttClient
from edge.live.feed import Change, Feed
from edge.live.readable import Readable

# (topic, payload, whether a client may receive it) -> sessions that took it
Publish = Callable[[str, bytes, Callable[[MqttClient], bool]], int]
_ESCAPES = {"%": "%25", "+": "%2B", "#": "%23", "\x00": "%00"}


def connect(feed: Feed, readable: Readable, publish: Publish) -> None:
    """Publish every data change the feed tells from now on."""
    feed.told.listen(lambda change: _publish(readable, publish, change))


def data_topic(org_id: str, group_id: str, path: str) -> str:
    """The topic of a data path: one level per path segment, each percent-encoded where a
    topic name cannot carry a character (`+`, `#`, NUL, and `%` itself)."""
    inner = path.strip("/")  # the root itself (a whole tree deleted) is `.../data`
    levels = [encode_level(level) for level in inner.split("/")] if inner else []
    return "/".join((org_id, "groups", group_id, "data", *levels))


def encode_level(level: str) -> str:
    return "".join(_ESCAPES.get(char, char) for char in level)


def _publish(readable: Readable, publish: Publish, change: Change) -> None:
    if change.kind != "data" or change.path is None:
        return
    topic = data_topic(change.org_id, change.subject, change.path)
    payload = json.dumps({"id": change.id, **change.body}).encode("utf-8")
    publish(topic, payload, lambda client: readable.may_read(client.principal(), change))
