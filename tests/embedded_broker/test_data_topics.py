"""Data changes over MQTT (docs/mqtt.md, "Data changes"; #30): each change to an entry is
published on `<org_id>/groups/<group_id>/data/<path>` to the sessions whose account may
read the path (group access and `data_paths`), whatever its IoT scopes say; nobody but
the server publishes there; rights lost while subscribed stop the delivery.

The callers are the world's (tests/world.py, with its content part): Ward holds the data.
Every device here is a real device of Clinic connecting with its API key through a real
paho client. That a session heard nothing is shown without timing: after the writes the
server sends each device a marker of its own, and sessions deliver in order, so
the marker is the next message of a session that heard nothing more.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from edge.app import MQTT
from edge.devices.mqtt_clients import MqttClient
from edge.devices.topics import device_rights
from edge.live.mqtt import data_topic
from embedded_broker import acl
from embedded_broker.service import MqttService
from tests.embedded_broker.clients import Client, Received
from tests.ports import free_port
from tests.world import World

pytestmark = pytest.mark.world("content", mqtt_port=lambda _: free_port())

READ = {"can_read": True}
EVERYTHING = {"/": {"can_publish": True, "can_subscribe": True}}
MARKER = b"marker"


def broker_of(world: World) -> MqttService:
    assert world.api is not None
    service: MqttService = world.api.client.server.app[MQTT]
    return service


async def device(
    world: World, name: str, data_paths: dict[str, Any] | None = None, **values: Any
) -> str:
    """An org-level device of Clinic (made unless the world has it), with group access to
    Ward holding these `data_paths` when given."""
    if name not in world.devices:
        await world.add_device(name, **values)
    if data_paths is not None:
        await world.grant(
            "group", world.org_group_id, world.id(name), "device", data_paths=data_paths
        )
    return name


async def subscribed(world: World, name: str, topic_filter: str | None = None) -> Client:
    """The device connected and subscribed (QoS 1) to Ward's data topics and to its own
    marker topic."""
    made = Client(
        world.site.services.config.mqtt_port,
        name,
        username=world.id(name),
        password=world.keys[name],
    )
    clients.append(made)
    assert (await made.connect())[0] == 0
    wanted = topic_filter or f"{world.tenant.org_id}/groups/{world.org_group_id}/data/#"
    assert await made.subscribe(wanted, 1) == 1
    assert await made.subscribe(marker_topic(world, name), 1) == 1
    return made


clients: list[Client] = []


@pytest.fixture(autouse=True)
def stop_clients() -> Any:
    yield
    while clients:
        clients.pop().stop()


def marker_topic(world: World, name: str) -> str:
    """A topic no data change is published on that any device of the org may subscribe
    to, whatever its root (the server's notice goes to that device's sessions alone)."""
    return f"{world.tenant.org_id}/groups/markers/{world.id(name)}"


async def heard(world: World, name: str, client: Client) -> list[str]:
    """The data paths the device heard until its marker."""
    assert broker_of(world).notify_device(world.id(name), marker_topic(world, name), MARKER) == 1
    paths: list[str] = []
    while (got := await client.next_message()).payload != MARKER:
        paths.append(json.loads(got.payload)["path"])
    return paths


def decoded(got: Received) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(got.payload)
    return body


async def test_a_data_change_reaches_only_who_may_read_its_path(world: World) -> None:
    """The reader of the whole group hears both writes, the reader of `/public` one; a
    device whose IoT scopes cover the topics but that holds no data rights, and a member
    of Ward with no `data_paths`, hear nothing."""
    names = {
        "whole": await device(world, "whole", {"/": READ}),
        "public": await device(world, "public", {"/public": READ}),
        "homed": await device(world, "homed", {"/": READ}, project_id=world.project_id),
        "scoped": await device(world, "scoped", iot_scopes=EVERYTHING),
        "member": "device_member",  # home project Apollo: subscribes at the org's root too
        "boss": "device_boss",  # an org admin
    }
    sessions = {name: await subscribed(world, name) for name in names.values()}
    await world.put_data("org_admin", "/secret/a", 1)
    await world.put_data("org_admin", "/public/b", 2)
    expected = {
        "whole": ["/secret/a", "/public/b"],
        "public": ["/public/b"],
        "homed": ["/secret/a", "/public/b"],  # a home project is no scope, as over HTTP
        "scoped": [],
        "device_member": [],
        "device_boss": ["/secret/a", "/public/b"],
    }
    assert {name: await heard(world, name, s) for name, s in sessions.items()} == expected


async def test_the_payload_says_what_changed_never_the_value(world: World) -> None:
    session = await subscribed(world, await device(world, "whole", {"/": READ}))
    await world.put_data("org_admin", "/sensors/t1", {"secret": 42})
    got = await session.next_message()
    org, ward = world.tenant.org_id, world.org_group_id
    assert got.topic == f"{org}/groups/{ward}/data/sensors/t1" and not got.retain
    body = decoded(got)
    assert isinstance(body.pop("id"), int) and isinstance(body.pop("date"), str)
    expected = {"kind": "data", "org_id": org, "group_id": ward, "path": "/sensors/t1"}
    assert body == {**expected, "operation": "put"}


async def test_a_device_hears_its_configuration_path_without_polling(world: World) -> None:
    name = await device(world, "configured", {"/config": READ})
    org, ward = world.tenant.org_id, world.org_group_id
    session = await subscribed(world, name, f"{org}/groups/{ward}/data/config/{world.id(name)}")
    await world.put_data("org_admin", f"/config/{world.id(name)}", {"interval": 5})
    await world.put_data("org_admin", "/config/another", {"interval": 9})
    assert await heard(world, name, session) == [f"/config/{world.id(name)}"]


async def test_characters_a_topic_cannot_carry_are_percent_encoded(world: World) -> None:
    session = await subscribed(world, await device(world, "whole", {"/": READ}))
    await world.put_data("org_admin", "/a+b/c#d/50%", 1)
    got = await session.next_message()
    prefix = f"{world.tenant.org_id}/groups/{world.org_group_id}/data"
    assert got.topic == f"{prefix}/a%2Bb/c%23d/50%25"
    assert decoded(got)["path"] == "/a+b/c#d/50%"


def test_the_topic_of_a_path() -> None:
    assert data_topic("o", "g", "/a/b") == "o/groups/g/data/a/b"
    assert data_topic("o", "g", "/x\x00y/%2B") == "o/groups/g/data/x%00y/%252B"
    assert data_topic("o", "g", "/") == "o/groups/g/data"  # a whole tree deleted


@pytest.mark.parametrize("how", ["access removed", "data_paths narrowed"])
async def test_rights_lost_while_subscribed_stop_the_delivery(world: World, how: str) -> None:
    name = await device(world, "reader", {"/": READ})
    session = await subscribed(world, name)
    await world.put_data("org_admin", "/before", 1)
    assert await heard(world, name, session) == ["/before"]
    access = f"/v2/groups/{world.org_group_id}/access/{world.id(name)}"
    if how == "access removed":
        status, body = await world.call("org_admin", "DELETE", access)
    else:
        narrowed = {"data_paths": {"/public": READ}}
        status, body = await world.call("org_admin", "PATCH", access, json=narrowed)
    assert status == 200, body
    await world.put_data("org_admin", "/after", 1)
    await world.put_data("org_admin", "/public/after", 1)
    assert await heard(world, name, session) == (
        [] if how == "access removed" else ["/public/after"]
    )


async def test_nobody_but_the_server_publishes_a_data_change(world: World) -> None:
    """A device whose IoT scopes cover the topics, and the org admin's user tool whose
    rights cover the org's root, are refused under either reading of the root."""
    listener = await subscribed(world, await device(world, "whole", {"/": READ}))
    org, ward = world.tenant.org_id, world.org_group_id
    forger = await subscribed(
        world, await device(world, "forger", {"/": READ}, iot_scopes=EVERYTHING)
    )
    tool = Client(
        world.site.services.config.mqtt_port,
        "tool",
        username="admin",
        password=await world.token("org_admin"),
    )
    clients.append(tool)
    assert (await tool.connect())[0] == 0
    before = broker_of(world).stats.refused_publishes
    topics = [f"{org}/groups/{ward}/data/forged", f"{org}/{world.project_id}/groups/{ward}/data/x"]
    for sender in (forger, tool):
        for topic in topics:
            await sender.publish(topic, b'{"path": "/forged"}', 1)  # acknowledged, dropped
    assert broker_of(world).stats.refused_publishes == before + 4
    assert await heard(world, "whole", listener) == []


def client(account_id: str, org_id: str = "org1") -> MqttClient:
    rights = device_rights(org_id, account_id, {"/sensors": {"can_subscribe": True}})
    return MqttClient("device", account_id, org_id, org_id, rights, "api_key", "")


def test_any_account_of_the_org_may_subscribe_to_its_data_topics() -> None:
    """Delivery is filtered per session, so the subscription is the org's own to hold;
    another org's data topics and the bare namespace stay outside the client's rights."""
    device = client("dev1")
    assert acl.subscribe_refusal(device, "org1/groups/g1/data/#") is None
    assert acl.subscribe_refusal(device, "org1/groups/+/data/config/dev1") is None
    assert acl.subscribe_refusal(device, "org2/groups/g1/data/#") is not None
    assert acl.subscribe_refusal(device, "org1/#") is not None
    assert acl.reserved_owner("org1/groups/g1/data/a") == acl.SERVER
    assert acl.reserved_owner("org1/prj1/groups/g1/data/a") == acl.SERVER
