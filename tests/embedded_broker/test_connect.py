"""Connecting: the three listeners and the three credentials of real devices (made through
`POST /v2/devices`), refusals with their CONNACK codes, and client IDs that belong to one
account."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from tests.embedded_broker.certs import issue
from tests.embedded_broker.conftest import Device, Harness

BAD_USERNAME_PASSWORD, NOT_AUTHORIZED = 4, 5


async def round_trip(broker: Harness, device: Device, listener: str, **login: object) -> str:
    """Connect on a listener, subscribe and publish inside the scope, get the message;
    returns the account the broker took the client for."""
    client = broker.client(f"rt-{listener}", listener, **login)  # type: ignore[arg-type]
    assert await client.connect() == (0, False)
    topic = f"{device.root}/sensors/{listener}"
    assert await client.subscribe(topic, 1) == 1
    await client.publish(topic, b"over " + listener.encode(), 1)
    got = await client.next_message()
    assert (got.topic, got.payload, got.qos) == (topic, b"over " + listener.encode(), 1)
    session = broker.session(device.id, f"rt-{listener}")
    account = "" if session is None else session.client.account_id
    await client.close()
    return account


async def test_tcp_with_device_id_and_api_key(broker: Harness) -> None:
    device = await broker.device("dev1")
    await round_trip(broker, device, "mqtt", **device.login)
    await broker.site.services.last_seen.flush()  # MQTT activity counts as seen
    status, reply = await broker.call("GET", f"/v2/devices/{device.id}")
    assert status == 200 and reply["device"]["last_seen"] is not None


async def test_websockets_with_device_id_and_api_key(broker: Harness) -> None:
    device = await broker.device("dev1")
    assert await round_trip(broker, device, "mqtt-ws", **device.login) == device.id


async def test_websockets_over_tls_with_device_id_and_api_key(broker: Harness) -> None:
    device = await broker.device("dev1")
    assert (
        await round_trip(broker, device, "mqtt-wss", tls=broker.tls(), **device.login) == device.id
    )


async def test_websockets_over_tls_with_the_client_certificate(broker: Harness) -> None:
    device = await broker.device("dev1")
    assert await round_trip(broker, device, "mqtt-wss", tls=broker.tls(device)) == device.id


async def test_wss_refuses_a_reset_certificate(broker: Harness) -> None:
    device = await broker.device("dev1")
    old_cert, old_key = await broker.reset_certificate(device)
    client = broker.client("old", "mqtt-wss", tls=(broker.ca_file, old_cert, old_key))
    assert (await client.connect())[0] == NOT_AUTHORIZED


async def test_tls_with_the_client_certificate_issued_at_creation(broker: Harness) -> None:
    device = await broker.device("dev1")
    assert await round_trip(broker, device, "mqtt-tls", tls=broker.tls(device)) == device.id


async def test_tls_with_an_api_key_and_no_certificate(broker: Harness) -> None:
    device = await broker.device("dev1")
    assert (
        await round_trip(broker, device, "mqtt-tls", tls=broker.tls(), **device.login) == device.id
    )


async def test_a_device_of_a_project_lives_under_the_project_root(broker: Harness) -> None:
    status, reply = await broker.call("POST", "/v2/projects", json={"name": "Ward"})
    assert status == 201, reply
    project_id = reply["project"]["id"]
    device = await broker.device("in-ward", project_id=project_id)
    assert device.root == f"{broker.org_id}/{project_id}"
    await round_trip(broker, device, "mqtt", **device.login)
    client = await broker.connected(device, "c")
    assert await client.subscribe(f"{broker.org_id}/sensors/#", 1) == 128  # the org's root


async def test_a_user_tool_with_an_access_token(broker: Harness) -> None:
    tool = broker.client("tool", username="anyone", password=broker.admin_token)
    assert await tool.connect() == (0, False)
    assert await tool.subscribe(f"{broker.org_id}/#", 1) == 1  # the admin's rights: the org
    assert await tool.subscribe(f"{broker.other_org_id}/#", 1) == 128
    await tool.close()


async def test_refusals_carry_the_connack_code(broker: Harness, tmp_path: Path) -> None:
    device = await broker.device("dev1")
    other = await broker.device("dev2")
    wrong_key = broker.client(username=device.id, password="not-the-key")
    assert (await wrong_key.connect())[0] == BAD_USERNAME_PASSWORD
    someone_elses = broker.client(username=device.id, password=other.api_key)
    assert (await someone_elses.connect())[0] == BAD_USERNAME_PASSWORD
    unknown = broker.client(username="nobody", password=device.api_key)
    assert (await unknown.connect())[0] == BAD_USERNAME_PASSWORD
    forged = broker.admin_token.rsplit(".", 1)[0] + ".forged"
    bad_token = broker.client(username="x", password=forged)
    assert (await bad_token.connect())[0] == BAD_USERNAME_PASSWORD
    anonymous = broker.client()
    assert (await anonymous.connect())[0] == NOT_AUTHORIZED
    data_dir = broker.site.services.config.data_dir
    cert_file, key_file, _ = issue(data_dir, "unregistered", tmp_path)  # site CA, no device
    stranger = broker.client(listener="mqtt-tls", tls=(broker.ca_file, cert_file, key_file))
    assert (await stranger.connect())[0] == NOT_AUTHORIZED
    assert broker.stats.refused_connects == 6


async def test_a_will_outside_the_scope_is_refused(broker: Harness) -> None:
    device = await broker.device("dev1")
    client = broker.client(**device.login)
    client.paho.will_set(f"{device.root}/elsewhere", b"gone", 1)
    assert (await client.connect())[0] == NOT_AUTHORIZED


@pytest.mark.parametrize(
    "tail", ["twin/update", "twin/get", "commands/r1/reply", "twin/update/delta", "tunnels/x"]
)
async def test_a_will_on_a_reserved_topic_is_refused(broker: Harness, tail: str) -> None:
    """Even the device's own request topics, which it may publish on: a will is routed
    (and retained) by the broker, never handed to the server's inbox (#29 F5)."""
    device = await broker.device("dev1")
    client = broker.client(**device.login)
    client.paho.will_set(f"{device.root}/devices/{device.id}/{tail}", b"{}", 1, True)
    assert (await client.connect())[0] == NOT_AUTHORIZED


async def test_the_will_is_published_when_a_client_drops(broker: Harness) -> None:
    device = await broker.device("dev1")
    watcher = await broker.connected(device, "watcher")
    assert await watcher.subscribe(f"{device.root}/sensors/status", 1) == 1
    dying = broker.client("dying", **device.login)
    dying.paho.will_set(f"{device.root}/sensors/status", b"offline", 1)
    assert (await dying.connect())[0] == 0
    dying.stall()
    dying.paho.socket().close()  # no DISCONNECT: the will goes out
    got = await watcher.next_message()
    assert (got.payload, got.qos) == (b"offline", 1)


async def test_client_ids_belong_to_an_account(broker: Harness) -> None:
    """Two devices may use the same client ID without taking over each other; the same
    device connecting twice replaces its first connection (MQTT-3.1.4-2)."""
    one, two = await broker.device("dev1"), await broker.device("dev2")
    first = await broker.connected(one, "sensor")
    other = await broker.connected(two, "sensor")
    assert await other.subscribe(f"{two.root}/sensors/x", 0) == 0  # still connected
    assert await first.subscribe(f"{one.root}/sensors/x", 0) == 0
    again = await broker.connected(one, "sensor")
    await first.disconnected()
    assert await again.subscribe(f"{one.root}/sensors/y", 0) == 0


def first_bytes_back(port: int) -> bytes:
    """What the broker answers a plain CONNECT with (b"" when it closes the connection)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"\x10\x0c\x00\x04MQTT\x04\x02\x00\x1e\x00\x00")
        try:
            return sock.recv(4)
        except ConnectionResetError:
            return b""


@pytest.mark.world(mqtt_max_connections=1)
async def test_connections_over_the_limit_are_closed(broker: Harness) -> None:
    device = await broker.device("dev1")
    await broker.connected(device, "first")
    assert await asyncio.to_thread(first_bytes_back, broker.ports["mqtt"]) == b""
    assert broker.stats.refused_connects == 1
