"""Topics the server publishes on are the server's alone, and a device's request topics
its own (embedded_broker/acl.py, RESERVED; #23).

A user who could publish on the org's root (but not open tunnels) published a forged
`open` notice on a device's tunnels topic, and the device's agent acted on it. Now such a
publish is refused (acknowledged, dropped, logged, counted) whoever sends it: a user tool
whose rights cover the topic, another device whose IoT scopes cover it, the device itself.
"""

from __future__ import annotations

import json
import logging

import pytest

from edge.devices.mqtt_clients import MqttClient
from edge.devices.topics import device_rights, scope_rights
from embedded_broker import acl
from tests.embedded_broker.conftest import Harness

EVERYTHING = {"/": {"can_publish": True, "can_subscribe": True}}


async def test_nobody_but_the_server_publishes_a_tunnel_notice(
    broker: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    device = await broker.device("target")
    topic = f"{device.root}/devices/{device.id}/tunnels"
    agent = await broker.connected(device, "agent")
    assert await agent.subscribe(topic, 1) == 1
    forged = json.dumps({"action": "open", "uuid": "forged", "destination_token": "x"}).encode()
    tool = broker.client("tool", username="admin", password=broker.admin_token)
    assert (await tool.connect())[0] == 0
    other = await broker.connected(await broker.device("other", EVERYTHING), "other")
    with caplog.at_level(logging.WARNING, "edge.mqtt"):
        for sender in (tool, other, agent):  # the device itself: the topic is the server's
            await sender.publish(topic, forged, 1)  # acknowledged...
            await sender.publish(f"{topic}/sub", forged, 1)
    assert broker.stats.refused_publishes == 6
    assert caplog.text.count("reserved for the server") == 6
    assert broker.mqtt.notify_device(device.id, topic, b'{"action": "close"}') == 1
    got = await agent.next_message()  # ...and never delivered: the server's comes first
    assert got.payload == b'{"action": "close"}'
    assert agent.messages.empty()


async def test_the_rest_of_a_device_namespace_is_open_to_those_with_rights(
    broker: Harness,
) -> None:
    """Only the reserved topics are: another device whose scopes cover a device's
    namespace still publishes elsewhere in it."""
    device = await broker.device("target")
    inbox = f"{device.root}/devices/{device.id}/inbox"
    client = await broker.connected(device, "c")
    assert await client.subscribe(inbox, 1) == 1
    other = await broker.connected(await broker.device("other", EVERYTHING), "other")
    await other.publish(inbox, b"hello", 1)
    assert (await client.next_message()).payload == b"hello"


ORG, PROJECT, DEVICE, OTHER = "org1", "prj1", "dev1", "dev2"
TABLE = (("tunnels/#", acl.SERVER), ("twin/update", acl.DEVICE))


def client(kind: str, account_id: str) -> MqttClient:
    if kind == "device":
        rights = device_rights(ORG, account_id, EVERYTHING)
    else:
        rights = scope_rights(publish=[ORG], subscribe=[ORG])
    return MqttClient(kind, account_id, ORG, ORG, rights, "token", "")  # type: ignore[arg-type]


@pytest.mark.parametrize("root", [ORG, f"{ORG}/{PROJECT}"])
@pytest.mark.parametrize(
    ("kind", "account_id", "rest", "refused"),
    [
        ("device", DEVICE, "twin/update", None),  # a device's own request topic
        ("device", OTHER, "twin/update", "reserved for the device's own sessions"),
        ("user", "u1", "twin/update", "reserved for the device's own sessions"),
        ("device", DEVICE, "twin/update/accepted", None),  # not in this table
        ("device", DEVICE, "tunnels", "reserved for the server"),
        ("user", "u1", "tunnels/x/y", "reserved for the server"),
        ("user", "u1", "inbox", None),
    ],
)
def test_the_table_decides_by_pattern_and_by_who_publishes(
    root: str, kind: str, account_id: str, rest: str, refused: str | None
) -> None:
    topic = f"{root}/devices/{DEVICE}/{rest}"
    assert acl._reserved_refusal(client(kind, account_id), topic, TABLE) == refused


def device_lines() -> list[str]:
    """Topics below a device's namespace near each of the device's own RESERVED lines:
    each `+` as an ID and as an empty level, one level more, one level less."""
    tails = []
    for pattern, owner in acl.RESERVED:
        if owner == acl.DEVICE:
            for level in ("r1", ""):
                tail = pattern.replace("+", level)
                tails += [tail, f"{tail}/x", tail.rsplit("/", 1)[0]]
    return tails + ["jobs/notify-next", "twin/update/accepted", "commands/r1", "x"]


async def test_the_devices_own_lines_are_exactly_what_the_inboxes_take(
    broker: Harness,
) -> None:
    """A topic the ACL calls the device's own request is one an inbox answers, and the
    other way round: an empty request ID (`commands//reply`) passed the ACL as a request,
    no inbox took it, and it was routed to subscribers and retained (#29)."""
    device = await broker.device("target", EVERYTHING)
    await broker.connected(device, "d")
    state = broker.session(device.id, "d")
    assert state is not None
    base = f"{device.root}/devices/{device.id}"
    for tail in device_lines():
        topic = f"{base}/{tail}"
        taken = broker.mqtt.router.inboxes.taking(state.client, topic) is not None
        assert (acl.reserved_owner(topic) == acl.DEVICE) == taken, topic


async def test_an_empty_request_id_is_neither_routed_nor_retained(broker: Harness) -> None:
    device = await broker.device("target", EVERYTHING)
    base = f"{device.root}/devices/{device.id}"
    listener = await broker.connected(await broker.device("listener", EVERYTHING), "l")
    assert await listener.subscribe(f"{base}/#", 1) == 1
    sender = await broker.connected(device, "d")
    spoof = b'{"status": 200, "payload": {"spoof": true}}'
    for tail in ("commands//reply", "jobs//get", "jobs//update"):
        await sender.publish(f"{base}/{tail}", spoof, 1, retain=True)  # acknowledged...
    await sender.publish(f"{base}/inbox", b"after", 1)
    got = await listener.next_message()  # ...and never delivered: the next one comes first
    assert (got.topic, got.payload) == (f"{base}/inbox", b"after")
    assert broker.stats.refused_publishes == 3
    assert broker.mqtt.router.retained.held(f"{base}/commands//reply")[0] is None
