"""What a client may publish to and subscribe to, as the broker decides it (docs/mqtt.md,
"Topics and rights"): the client's topic rights from the device registry
(edge/devices/topics.py), then two rules of the broker's own.

- Size: a topic name or filter has at most `MAX_LEVELS` levels and `MAX_TOPIC_BYTES`
  bytes. Topic trees are walked level by level; a topic 1,500 levels deep once cut off
  every `#` subscriber, and a filter's length is what a stored session is made of.
- Reserved topics: under each device's own namespace, `<root>/devices/<device_id>/`,
  some topics are the server's alone (it publishes there, e.g. tunnel notices) and some
  accept publishes from that device's own sessions only (its requests to the server),
  whatever another client's rights say. `RESERVED` is the table: one line per topic
  pattern, relative to the namespace, as an MQTT filter whose `+` (a request or job ID)
  never matches an empty level. So the device's own lines are exactly the topics the
  server's inboxes take: `commands//reply` is no request (no inbox takes it) and falls to
  the server's line below, instead of being routed to subscribers and retained.
- Data changes: `<org_id>/groups/` and everything below it (and `<org>/<project>/groups/`,
  so neither reading of the root slips past) is the server's alone. Any account of the
  org may subscribe under `<org_id>/groups/`: what each session then receives is filtered
  by the data read rules when the server publishes (docs/mqtt.md, "Data changes").

Each check answers None (allowed) or the reason of the refusal, for the log line.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from edge.devices.mqtt_clients import MqttClient

MAX_LEVELS = 128
MAX_TOPIC_BYTES = 1024
SERVER, DEVICE = "server", "device"
COMMAND_REPLY = "commands/+/reply"
GROUPS = "groups"  # <root>/groups/...: the server's data-change topics

# Under <root>/devices/<device_id>/: who may publish there (the server itself does not
# go through these checks). Topics to come (docs/mqtt.md, "Reserved topics") are one
# line each here.
# The first line that matches decides.
RESERVED: tuple[tuple[str, str], ...] = (
    ("tunnels/#", SERVER),  # tunnel notices (edge/tunnels/notices.py)
    (COMMAND_REPLY, DEVICE),  # a command's reply (edge/commands/service.py)
    ("commands/#", SERVER),  # commands to the device
    ("twin/get", DEVICE),  # twin requests (edge/twins/inbox.py) ...
    ("twin/update", DEVICE),
    ("twin/#", SERVER),  # ... and their replies and deltas (the first matching line decides)
    ("jobs/get", DEVICE),  # job requests (edge/jobs/inbox.py) ...
    ("jobs/+/get", DEVICE),
    ("jobs/+/update", DEVICE),
    ("jobs/#", SERVER),  # ... their replies, and notify-next
)


def publish_refusal(client: MqttClient, topic: str) -> str | None:
    """Why `client` may not publish to `topic`, or None. The topic is split into its
    levels once for every rule (each publish of every device pays these checks)."""
    if (refusal := _size_refusal(topic)) is not None:
        return refusal
    levels = topic.split("/")
    return (
        _groups_refusal(topic, levels)
        or _reserved_refusal(client, topic, RESERVED, levels)
        or (None if client.rights.may_publish(topic) else "outside the client's rights")
    )


def subscribe_refusal(client: MqttClient, topic_filter: str) -> str | None:
    """Why `client` may not subscribe to `topic_filter`, or None."""
    if (refusal := _size_refusal(topic_filter)) is not None:
        return refusal
    if data_changes_filter(client, topic_filter):
        return None
    return None if client.rights.may_subscribe(topic_filter) else "outside the client's rights"


def data_changes_filter(client: MqttClient, topic_filter: str) -> bool:
    """A filter inside the client's own org's data-change topics, `<org_id>/groups/...`:
    any account of the org may hold one (delivery is filtered per session)."""
    levels = topic_filter.split("/")
    return len(levels) > 2 and levels[0] == client.org_id and levels[1] == GROUPS


def _groups_refusal(topic: str, split: list[str] | None = None) -> str | None:
    """The data-change topics are the server's alone, under either reading of the root."""
    levels = topic.split("/") if split is None else split
    if any(len(levels) > at and levels[at] == GROUPS for at in (1, 2)):
        return "reserved for the server"
    return None


def too_deep(topic: str) -> bool:
    """Over the size rule (a retained message stored before the rule existed)."""
    return _size_refusal(topic) is not None


def _size_refusal(topic: str) -> str | None:
    if topic.count("/") >= MAX_LEVELS:
        return f"more than {MAX_LEVELS} levels"
    if len(topic.encode("utf-8")) > MAX_TOPIC_BYTES:
        return f"longer than {MAX_TOPIC_BYTES} bytes"
    return None


def _reserved_refusal(
    client: MqttClient,
    topic: str,
    table: tuple[tuple[str, str], ...],
    split: list[str] | None = None,
) -> str | None:
    """A topic of a device's namespace that the table reserves, published by someone it
    is not reserved for. The root is the org (one level) or org/project (two): both
    readings are checked, so neither can be used to slip past the other."""
    for device_id, rest in _namespaces(topic, split):
        for pattern, owner in table:
            if _reserves(_pattern_levels(pattern), rest):
                if owner == SERVER:
                    return "reserved for the server"
                if client.kind != "device" or client.account_id != device_id:
                    return "reserved for the device's own sessions"
                break
    return None


def reserved_owner(topic: str) -> str | None:
    """Whom `topic` is reserved for (SERVER or DEVICE, by the first matching line of
    `RESERVED`, SERVER for the data-change topics), or None when it is no reserved topic,
    under either reading of the root."""
    if _groups_refusal(topic) is not None:
        return SERVER
    for _, rest in _namespaces(topic):
        for pattern, owner in RESERVED:
            if _reserves(_pattern_levels(pattern), rest):
                return owner
    return None


def _namespaces(topic: str, split: list[str] | None = None) -> list[tuple[str, list[str]]]:
    """(device ID, the levels below its namespace) for each reading of the root."""
    levels = topic.split("/") if split is None else split
    return [
        (levels[start + 1], levels[start + 2 :])
        for start in (1, 2)
        if len(levels) > start + 2 and levels[start] == "devices"
    ]


def filter_matches(topic_filter: str, topic: str) -> bool:
    """Whether a subscription to `topic_filter` receives what is published on `topic`."""
    return _matches(topic_filter.split("/"), topic.split("/"))


@functools.cache
def _pattern_levels(pattern: str) -> tuple[str, ...]:
    """A reserved line's levels, split once (the table is fixed; tests pass their own)."""
    return tuple(pattern.split("/"))


def _reserves(pattern: Sequence[str], levels: list[str]) -> bool:
    """A reserved line matches these levels: as an MQTT filter, but its `+` stands for an
    ID and matches no empty level."""
    return _matches(pattern, levels) and all(
        levels[at] for at, want in enumerate(pattern) if want == "+"
    )


def _matches(pattern: Sequence[str], levels: list[str]) -> bool:
    """MQTT filter matching (`+` one level, `#` this level and all below)."""
    for i, want in enumerate(pattern):
        if want == "#":
            return True
        if i >= len(levels) or (want != "+" and want != levels[i]):
            return False
    return len(levels) == len(pattern)
