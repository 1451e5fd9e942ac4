"""MQTT over WebSockets costs what MQTT over TCP does (#23): the `websockets` library's
defaults (frames up to 1 MiB, 16 of them buffered per client) were not overridden, and
30 paused clients took +300 MiB against +7 MiB over TCP. A frame may now carry at most
one packet of `mqtt_max_message_bytes`, and few wait."""

from __future__ import annotations

from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from embedded_broker.listeners import MQTT_FIXED_HEADER, WS_MAX_QUEUE, WS_WRITE_LIMIT
from tests.embedded_broker import packets
from tests.embedded_broker.conftest import Harness

LIMIT = 65536
MESSAGE_TOO_BIG = 1009


pytestmark = pytest.mark.world(mqtt_max_message_bytes=LIMIT)


@pytest.mark.parametrize("listener", ["mqtt-ws", "mqtt-wss"])
async def test_a_websocket_client_gets_the_bounds_of_a_tcp_one(
    broker: Harness, listener: str
) -> None:
    device = await broker.device("dev1")
    client = broker.client("ws", listener, **device.login)  # paho over WebSockets
    assert (await client.connect())[0] == 0
    topic = f"{device.root}/sensors/t"
    assert await client.subscribe(topic, 1) == 1  # the connection is the session's by now
    session = broker.session(device.id, "ws")
    assert session is not None and session.link is not None
    server_end: Any = session.link._connection  # type: ignore[attr-defined]
    assert server_end.protocol.max_size == LIMIT + MQTT_FIXED_HEADER
    assert server_end.max_queue == (WS_MAX_QUEUE, None)
    assert server_end.write_limit == (WS_WRITE_LIMIT, None)
    await client.publish(topic, b"x" * (LIMIT - 100), 1)  # a packet within the limit
    assert len((await client.next_message()).payload) == LIMIT - 100


async def test_a_frame_over_the_message_limit_is_refused(broker: Harness) -> None:
    """Two packets within the limit in one frame over it: the frame is refused (close
    code 1009) and neither is delivered."""
    device = await broker.device("dev1")
    topic = f"{device.root}/sensors/t"
    watcher = await broker.connected(device, "watcher")
    assert await watcher.subscribe(topic, 0) == 0
    async with connect(
        f"ws://127.0.0.1:{broker.ports['mqtt-ws']}/mqtt", subprotocols=["mqtt"]
    ) as ws:  # type: ignore[list-item]
        await ws.send(packets.connect("ws", device.id, device.api_key))
        assert await ws.recv() == b"\x20\x02\x00\x00"
        await ws.send(packets.publish(topic, b"a" * 40000) + packets.publish(topic, b"b" * 40000))
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == MESSAGE_TOO_BIG
    marker = await broker.connected(device, "marker")
    await marker.publish(topic, b"marker", 0)
    assert (await watcher.next_message()).payload == b"marker"
