"""Who is online (docs/presence.md; #29), through real MQTT clients and real HTTP: a
connect, a clean disconnect, a killed client (its socket closed without DISCONNECT), a
client that goes silent (keep-alive expiry), a takeover, a key reset, a second session, a
tunnel agent; the `is_online` filter; nobody online after a
restart; the figures in /metrics and the presence events."""

from __future__ import annotations

import asyncio
import logging
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from edge.devices.presence import PresenceEvent
from tests.api.test_metrics import scrape, value
from tests.embedded_broker import packets
from tests.embedded_broker.conftest import Device, Harness, start
from tests.waiting import eventually_async


async def presence(harness: Harness, device: Device) -> dict[str, Any]:
    status, body = await harness.call("GET", f"/v2/devices/{device.id}")
    assert status == 200, body
    found = body["device"]
    return {k: found.get(k) for k in ("is_online", "connected_since", "last_disconnect_reason")}


async def until_state(
    harness: Harness, device: Device, online: bool, reason: str | None
) -> dict[str, Any]:
    """The device's presence once it is `online` with `reason` (presence is written right
    after the broker sees a connect or a disconnect; the wait is a bound on failure)."""
    seen: dict[str, Any] = {}

    async def there() -> bool:
        seen.update(await presence(harness, device))
        return seen["is_online"] is online and seen["last_disconnect_reason"] == reason

    await eventually_async(there, f"online {online}, reason {reason}")
    return seen


async def test_a_device_is_online_while_connected_and_says_why_it_left(broker: Harness) -> None:
    device = await broker.device("meter")
    assert await presence(broker, device) == {
        "is_online": False,
        "connected_since": None,
        "last_disconnect_reason": None,
    }
    client = await broker.connected(device, "m1")
    await until_state(broker, device, True, None)
    assert (await presence(broker, device))["connected_since"] is not None
    await client.close()
    await until_state(broker, device, False, "clean")
    assert (await presence(broker, device))["connected_since"] is None


async def test_online_while_one_of_its_sessions_is(broker: Harness) -> None:
    device = await broker.device("meter")
    first = await broker.connected(device, "a")
    second = await broker.connected(device, "b")
    await until_state(broker, device, True, None)
    await first.close()
    await broker.until(lambda: broker.mqtt.broker is not None and broker.mqtt.broker.live == 1)
    assert (await presence(broker, device))["is_online"] is True
    await second.close()
    await until_state(broker, device, False, "clean")


async def test_a_closed_socket_without_disconnect_is_a_lost_connection(broker: Harness) -> None:
    """A client that closes its socket without DISCONNECT is offline at once, the reason
    `connection_lost` (not a keep-alive expiry: the broker sees the socket end)."""
    device = await broker.device("meter")
    reader, writer = await asyncio.open_connection("127.0.0.1", broker.ports["mqtt"])
    writer.write(packets.connect("abrupt", device.id, device.api_key, keep_alive=600))
    assert await reader.readexactly(4) == b"\x20\x02\x00\x00"  # CONNACK accepted
    await until_state(broker, device, True, None)
    writer.close()
    await writer.wait_closed()
    assert (await until_state(broker, device, False, "connection_lost"))["connected_since"] is None


KILLED_CLIENT = """
import sys
import threading
import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

port, username, password = sys.argv[1], sys.argv[2], sys.argv[3]
client = paho.Client(CallbackAPIVersion.VERSION2, client_id="doomed", protocol=paho.MQTTv311)
client.username_pw_set(username, password)
client.on_connect = lambda *args: print("connected", flush=True)
client.connect("127.0.0.1", int(port), keepalive=600)
client.loop_start()
threading.Event().wait()
"""


async def test_a_killed_client_goes_offline_as_a_lost_connection(broker: Harness) -> None:
    """A process holding a paho client, killed (SIGKILL): its kernel closes the socket, so
    the device is offline with `connection_lost` long before its keep-alive (600 s)."""
    device = await broker.device("meter")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        KILLED_CLIENT,
        str(broker.ports["mqtt"]),
        device.id,
        device.api_key,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        assert await process.stdout.readline() == b"connected\n"
        await until_state(broker, device, True, None)
        process.send_signal(signal.SIGKILL)
        assert await process.wait() == -signal.SIGKILL
        await until_state(broker, device, False, "connection_lost")
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_a_silent_client_goes_offline_past_its_keepalive(broker: Harness) -> None:
    """A client that sends nothing more with its socket still open (a frozen process, a
    pulled cable): after 1.5 keep-alive periods it is offline."""
    device = await broker.device("meter")
    reader, writer = await asyncio.open_connection("127.0.0.1", broker.ports["mqtt"])
    try:
        writer.write(packets.connect("silent", device.id, device.api_key, keep_alive=1))
        assert await reader.readexactly(4) == b"\x20\x02\x00\x00"  # CONNACK accepted
        await until_state(broker, device, True, None)
        await until_state(broker, device, False, "keepalive_timeout")
    finally:
        writer.close()


async def test_a_takeover_keeps_the_device_online(broker: Harness) -> None:
    device = await broker.device("meter")
    old = await broker.connected(device, "same")
    since = (await until_state(broker, device, True, None))["connected_since"]
    new = await broker.connected(device, "same")
    await old.disconnected()
    taken = await until_state(broker, device, True, "taken_over")
    assert since is not None and taken["connected_since"] is not None  # online throughout
    await new.close()
    assert (await until_state(broker, device, False, "clean"))["connected_since"] is None


async def test_a_key_reset_takes_the_device_offline(broker: Harness) -> None:
    device = await broker.device("meter")
    client = await broker.connected(device, "m1")
    await until_state(broker, device, True, None)
    await broker.reset_api_key(device)
    await client.disconnected()
    assert (await until_state(broker, device, False, "revoked"))["connected_since"] is None


async def test_the_list_filters_on_is_online(broker: Harness) -> None:
    online, offline = await broker.device("on"), await broker.device("off")
    await broker.connected(online, "c")
    await until_state(broker, online, True, None)

    async def listed(flag: str) -> set[str]:
        status, body = await broker.call("GET", f"/v2/devices?is_online={flag}")
        assert status == 200, body
        return {d["id"] for d in body["devices"]}

    assert await listed("true") == {online.id}
    assert offline.id in await listed("false") and online.id not in await listed("false")
    status, body = await broker.call("GET", "/v2/devices?is_online=maybe")
    assert (status, body) == (400, {"message": "is_online: must be true or false"})


async def test_nobody_is_online_after_a_restart(
    broker: Harness, aiohttp_client: Any, tmp_path: Path
) -> None:
    """The data folder as a kill leaves it, a device online: after the restart it is
    offline until it connects again, the reason `server_stopping`."""
    device = await broker.device("meter")
    await broker.connected(device, "m1")
    await until_state(broker, device, True, None)
    copy = tmp_path / "after-kill"
    shutil.copytree(
        broker.site.services.config.data_dir, copy, ignore=shutil.ignore_patterns("*.lock")
    )
    restarted = await start(copy, aiohttp_client)
    restarted.orgs = broker.orgs  # the same admins, signed in before
    try:
        after = await until_state(restarted, device, False, "server_stopping")
        assert after["connected_since"] is None
        await restarted.connected(device, "m1")
        back = await until_state(restarted, device, True, "server_stopping")
        assert back["connected_since"] is not None
    finally:
        restarted.stop_clients()


async def test_connects_and_disconnects_are_counted_and_published(broker: Harness) -> None:
    events: list[PresenceEvent] = []
    broker.site.services.devices.presence.events.listen(events.append)
    staff = await broker.app_api.token()
    before = await scrape(broker.app_api, staff)
    device = await broker.device("meter")
    client = await broker.connected(device, "m1")
    await until_state(broker, device, True, None)
    during = await scrape(broker.app_api, staff)
    await client.close()
    await until_state(broker, device, False, "clean")
    after = await scrape(broker.app_api, staff)
    assert value(during, "edge_devices_online") == 1
    assert value(after, "edge_devices_online") == 0
    assert (
        value(during, "edge_device_connects_total") - value(before, "edge_device_connects_total")
        == 1
    )
    closed = "edge_device_disconnects_total"
    assert value(after, closed, reason="clean") - value(before, closed, reason="clean") == 1
    assert [(e.device_id, e.online, e.reason) for e in events] == [
        (device.id, True, None),
        (device.id, False, "clean"),
    ]


async def test_a_failing_listener_is_logged_and_presence_goes_on(
    broker: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """The same hook as the twins' (edge/kernel/events.py): a listener's fault is not presence's."""
    events: list[PresenceEvent] = []

    def failing(event: PresenceEvent) -> None:
        raise RuntimeError("a listener's own fault")

    broker.site.services.devices.presence.events.listen(failing)
    broker.site.services.devices.presence.events.listen(events.append)
    device = await broker.device("meter")
    with caplog.at_level(logging.ERROR, "edge.events"):
        client = await broker.connected(device, "m1")
        await until_state(broker, device, True, None)
        await client.close()
        await until_state(broker, device, False, "clean")
    assert [e.online for e in events] == [True, False]
    assert caplog.text.count("presence: a listener failed") == 2


async def test_a_device_deleted_for_good_while_connected_leaves_no_error(
    broker: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Its session ends as it goes: there is no device left to mark offline, and no write
    to fail."""
    device = await broker.device("meter")
    client = await broker.connected(device, "m1")
    await until_state(broker, device, True, None)
    with caplog.at_level(logging.ERROR, "edge.presence"):
        status, body = await broker.call("DELETE", f"/v2/devices/{device.id}?permanent=true")
        assert status == 200, body
        await client.disconnected()
        await broker.until(lambda: not broker.site.services.devices.presence.is_online(device.id))
        await broker.site.services.db.write(lambda c: None)  # the presence write is done
    assert "presence could not be stored" not in caplog.text
