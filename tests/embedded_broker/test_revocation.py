"""When the registry's epoch moves, live connections are checked again: a reset API key or
certificate, a suspended or deleted device and a revoked user session lose their
connection (their will is not sent) and cannot connect again with the old credential."""

from __future__ import annotations

from pathlib import Path

from tests.embedded_broker.certs import issue
from tests.embedded_broker.conftest import ORG, Harness


async def test_a_reset_api_key_drops_the_session_and_is_refused(broker: Harness) -> None:
    device = broker.device("dev1")
    watcher = await broker.connected(broker.device("dev2"), "watcher")
    assert await watcher.subscribe(f"{ORG}/sensors/status", 1) == 1
    client = broker.client("c", username="dev1", password=device.api_key)
    client.paho.will_set(f"{ORG}/sensors/status", b"will", 1)
    assert (await client.connect())[0] == 0
    old_key = device.api_key
    device.api_key, device.key_version = "the-new-key", 2
    broker.directory.move()
    await client.disconnected()
    again = broker.client("c2", username="dev1", password=old_key)
    assert (await again.connect())[0] == 4
    fresh = await broker.connected(device, "c3")  # the new key works
    await fresh.publish(f"{ORG}/sensors/status", b"marker", 1)
    assert (await watcher.next_message()).payload == b"marker"  # the will was not sent
    assert broker.stats.revoked == 1


async def test_a_reset_certificate_drops_the_session_and_is_refused(
    broker: Harness, tmp_path: Path
) -> None:
    data_dir = broker.site.services.config.data_dir
    cert_file, key_file, der = issue(data_dir, "dev1", tmp_path)
    device = broker.device("dev1", certificate_der=der)
    tls = (data_dir / "ca" / "ca.pem", cert_file, key_file)
    client = broker.client("c", "mqtt-tls", tls=tls)
    assert (await client.connect())[0] == 0
    _, _, device.certificate_der = issue(data_dir, "dev1-new", tmp_path)
    broker.directory.move()
    await client.disconnected()
    again = broker.client("c2", "mqtt-tls", tls=tls)
    assert (await again.connect())[0] == 5


async def test_a_suspended_device_is_disconnected(broker: Harness) -> None:
    device = broker.device("dev1")
    client = await broker.connected(device, "c")
    bystander = await broker.connected(broker.device("dev2"), "b")
    device.suspended = True
    broker.directory.move()
    await client.disconnected()
    assert (await broker.client(username="dev1", password=device.api_key).connect())[0] == 4
    assert await bystander.subscribe(f"{ORG}/sensors/x", 1) == 1  # others stay connected


async def test_a_deleted_device_loses_its_persistent_session(broker: Harness) -> None:
    device = broker.device("dev1")
    client = await broker.connected(device, "keeper", clean=False)
    assert await client.subscribe(f"{ORG}/sensors/#", 1) == 1
    await client.close()
    assert broker.session("dev1", "keeper") is not None  # kept while offline
    device.deleted = True
    broker.directory.move()
    await broker.until(lambda: broker.session("dev1", "keeper") is None)


async def test_a_revoked_user_session_is_disconnected(broker: Harness) -> None:
    broker.directory.add_user_token("head.claims.signature", "user0000000000001", ORG, "s1")
    tool = broker.client("tool", username="u", password="head.claims.signature")
    assert (await tool.connect())[0] == 0
    broker.directory.revoked_sessions.add("s1")
    broker.directory.move()
    await tool.disconnected()
