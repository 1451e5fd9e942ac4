"""When the registry's epoch moves, live connections are checked again. Every change is
made the way an operator makes it, through the HTTP API: a reset API key or certificate,
a suspended or deleted device lose their connection (their will is not sent) and cannot
connect again with the old credential; a revoked user session loses its tool's
connection."""

from __future__ import annotations

from tests.embedded_broker.conftest import Harness


async def test_a_reset_api_key_drops_the_session_and_is_refused(broker: Harness) -> None:
    device = await broker.device("dev1")
    watcher = await broker.connected(await broker.device("dev2"), "watcher")
    status_topic = f"{broker.org_id}/sensors/status"
    assert await watcher.subscribe(status_topic, 1) == 1
    client = broker.client("c", **device.login)
    client.paho.will_set(status_topic, b"will", 1)
    assert (await client.connect())[0] == 0
    old_key = await broker.reset_api_key(device)
    await client.disconnected()
    again = broker.client("c2", username=device.id, password=old_key)
    assert (await again.connect())[0] == 4
    fresh = await broker.connected(device, "c3")  # the new key works
    await fresh.publish(status_topic, b"marker", 1)
    assert (await watcher.next_message()).payload == b"marker"  # the will was not sent
    assert broker.stats.revoked == 1


async def test_a_reset_certificate_drops_the_session_and_is_refused(broker: Harness) -> None:
    device = await broker.device("dev1")
    client = broker.client("c", "mqtt-tls", tls=broker.tls(device))
    assert (await client.connect())[0] == 0
    old_cert, old_key = await broker.reset_certificate(device)
    await client.disconnected()
    again = broker.client("c2", "mqtt-tls", tls=(broker.ca_file, old_cert, old_key))
    assert (await again.connect())[0] == 5  # signed by the site CA, but no longer registered
    renewed = broker.client("c3", "mqtt-tls", tls=broker.tls(device))
    assert (await renewed.connect())[0] == 0
    by_key = await broker.connected(device, "c4")  # the API key was not touched
    await by_key.close()


async def test_a_suspended_device_is_disconnected(broker: Harness) -> None:
    device = await broker.device("dev1")
    client = await broker.connected(device, "c")
    over_tls = broker.client("t", "mqtt-tls", tls=broker.tls(device))
    assert (await over_tls.connect())[0] == 0
    bystander = await broker.connected(await broker.device("dev2"), "b")
    await broker.suspend(device)
    await client.disconnected()
    await over_tls.disconnected()
    assert (await broker.client(**device.login).connect())[0] == 4
    assert (await broker.client("t2", "mqtt-tls", tls=broker.tls(device)).connect())[0] == 5
    assert await bystander.subscribe(f"{broker.org_id}/sensors/x", 1) == 1  # others stay


async def test_a_deleted_device_is_disconnected_and_loses_its_persistent_session(
    broker: Harness,
) -> None:
    device = await broker.device("dev1")
    keeper = await broker.connected(device, "keeper", clean=False)
    assert await keeper.subscribe(f"{broker.org_id}/sensors/#", 1) == 1
    await keeper.close()
    assert broker.session(device.id, "keeper") is not None  # kept while offline
    live = await broker.connected(device, "live")
    await broker.delete(device)
    await live.disconnected()
    await broker.until(lambda: broker.session(device.id, "keeper") is None)
    assert (await broker.client(**device.login).connect())[0] == 4


async def test_a_revoked_user_session_is_disconnected(broker: Harness) -> None:
    tool = broker.client("tool", username="u", password=broker.admin_token)
    assert (await tool.connect())[0] == 0
    status, reply = await broker.call("PUT", "/v2/auth/token/revoke")  # the admin signs out
    assert status < 300, reply
    await tool.disconnected()


async def test_a_suspended_orgs_user_tools_are_disconnected(broker: Harness) -> None:
    """Suspending an org ends its users' sessions, and with them their tools' connections.
    A device's API key is its own credential, not a session: it stays until the device is
    suspended (docs/lifecycle.md)."""
    device = await broker.device("dev1")
    client = await broker.connected(device, "c")
    tool = broker.client("tool", username="u", password=broker.admin_token)
    assert (await tool.connect())[0] == 0
    staff = await broker.app_api.token()
    path = f"/v2/orgs/{broker.org_id}"
    status, reply = await broker.call("PATCH", path, token=staff, json={"is_active": False})
    assert status == 200, reply
    await tool.disconnected()
    again = broker.client("tool2", username="u", password=broker.admin_token)
    assert (await again.connect())[0] == 4
    assert await client.subscribe(f"{device.root}/sensors/x", 1) == 1
