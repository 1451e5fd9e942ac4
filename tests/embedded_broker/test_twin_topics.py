"""Device twins over MQTT (docs/twins.md), with real paho clients against the embedded
broker and real HTTP: `get` and `update` answered on `accepted`/`rejected` (the
`client_token` echoed, each rejection naming its rule), `update/delta` at QoS 1 when
`desired` changes over HTTP, at once on subscribing, and again on reconnecting; an update
durable before its acknowledgement; and the request, reply and delta topics refused to
anyone else (another device, a user tool), the reply topics to the device itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from typing import Any

import pytest

from edge.twins.twins import Update
from embedded_broker import frames, inbound
from storage import devices as device_store
from tests.embedded_broker import packets
from tests.embedded_broker.clients import Client
from tests.embedded_broker.conftest import Device, Harness

EVERYTHING = {"/": {"can_publish": True, "can_subscribe": True}}
SUBACK, PINGRESP = 9, 13  # packet types


def twin(device: Device) -> str:
    return f"{device.root}/devices/{device.id}/twin"


async def listening(broker: Harness, device: Device, client_id: str = "d", **kw: Any) -> Client:
    """The device, connected and subscribed to every twin reply (the delta included)."""
    client = await broker.connected(device, client_id, **kw)
    assert await client.subscribe(f"{twin(device)}/+/+", 1) == 1
    return client


async def reply(client: Client) -> tuple[str, dict[str, Any]]:
    got = await client.next_message()
    return got.topic, json.loads(got.payload)


async def set_desired(broker: Harness, device: Device, desired: dict[str, Any]) -> Any:
    status, body = await broker.call(
        "PATCH", f"/v2/devices/{device.id}/twin", json={"desired": desired}
    )
    assert status == 200, body
    return body["twin"]


async def test_get_answers_the_document_and_echoes_the_client_token(broker: Harness) -> None:
    device = await broker.device("pump")
    await set_desired(broker, device, {"speed": 3})
    client = await broker.connected(device, "d")
    assert await client.subscribe(f"{twin(device)}/get/+", 1) == 1
    await client.publish(f"{twin(device)}/get", json.dumps({"client_token": "t-1"}).encode(), 1)
    topic, body = await reply(client)
    assert topic == f"{twin(device)}/get/accepted"
    assert body["desired"] == {"speed": 3} and body["version"] == 1
    assert body["delta"] == {"speed": 3} and body["client_token"] == "t-1"
    await client.publish(f"{twin(device)}/get", b"", 0)  # an empty get is a get
    topic, body = await reply(client)
    assert topic == f"{twin(device)}/get/accepted" and "client_token" not in body


async def test_an_update_is_durable_before_it_is_acknowledged(broker: Harness) -> None:
    device = await broker.device("pump")
    client = await listening(broker, device)
    update = {"reported": {"speed": 3, "fw": "2.1"}, "client_token": "u-1"}
    await client.publish(f"{twin(device)}/update", json.dumps(update).encode(), 1)
    stored = broker.site.services.twins.current(device.id)  # the PUBACK has come
    assert stored.reported == {"speed": 3, "fw": "2.1"} and stored.version == 1
    topic, body = await reply(client)
    assert topic == f"{twin(device)}/update/accepted"
    assert body["reported"] == {"speed": 3, "fw": "2.1"} and body["client_token"] == "u-1"
    status, got = await broker.call("GET", f"/v2/devices/{device.id}/twin")
    assert status == 200 and got["twin"]["reported"] == body["reported"]
    assert got["twin"]["metadata"]["reported"]["fw"] == body["updated_date"]


@pytest.mark.parametrize(
    ("payload", "code", "words"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b"[1]", 406, "JSON object"),
        (json.dumps({"desired": {"a": 1}}).encode(), 403, "desired is set by others"),
        (json.dumps({"reported": {"a": "x" * 9000}}).encode(), 400, "limit of 8192"),
        (json.dumps({"reported": {"k" * 200: 1}}).encode(), 400, "1 to 128 characters"),
        (json.dumps({"reported": {"\u0000": 1}}).encode(), 400, "control characters"),
        (json.dumps({"reported": {"a": {"\x1b[2J": 1}}}).encode(), 400, "reported.a: keys"),
        (json.dumps({"reported": {"a": 1}, "version": 7}).encode(), 409, "at version 0"),
        (json.dumps({"reported": 5}).encode(), 400, "must be an object"),
        (json.dumps({"state": {}}).encode(), 406, "not a field"),
    ],
)
async def test_a_refused_update_is_rejected_naming_the_rule(
    broker: Harness, payload: bytes, code: int, words: str
) -> None:
    device = await broker.device("pump")
    client = await listening(broker, device)
    with_token = payload
    if payload.startswith(b"{") and payload.endswith(b"}"):
        with_token = json.dumps({**json.loads(payload), "client_token": "r"}).encode()
    await client.publish(f"{twin(device)}/update", with_token, 1)
    topic, body = await reply(client)
    assert topic == f"{twin(device)}/update/rejected"
    assert body["code"] == code and words in body["message"], body
    assert body.get("client_token") == ("r" if with_token != payload else None)
    assert broker.site.services.twins.current(device.id).version == 0


async def test_an_over_long_client_token_is_not_echoed(broker: Harness) -> None:
    """A rejected token is named in the message, not copied back (#29 F7): a reply never
    carries more than a request could validly have."""
    device = await broker.device("pump")
    client = await listening(broker, device)
    update = {"reported": {"a": 1}, "client_token": "t" * 100_000}
    await client.publish(f"{twin(device)}/update", json.dumps(update).encode(), 1)
    topic, body = await reply(client)
    assert topic == f"{twin(device)}/update/rejected"
    assert "client_token" in body["message"] and "client_token" not in body, len(str(body))


async def test_desired_set_over_http_reaches_the_device_as_a_delta(broker: Harness) -> None:
    device = await broker.device("pump")
    client = await listening(broker, device)
    await client.publish(f"{twin(device)}/update", b'{"reported": {"speed": 1, "fw": "2"}}', 1)
    await reply(client)  # update/accepted
    await set_desired(broker, device, {"speed": 4, "fw": "2"})
    got = await client.next_message()
    assert got.topic == f"{twin(device)}/update/delta" and got.qos == 1
    assert json.loads(got.payload)["delta"] == {"speed": 4}  # only what differs
    assert json.loads(got.payload)["version"] == 2


async def test_a_device_catches_up_when_it_subscribes(broker: Harness) -> None:
    device = await broker.device("pump")
    await set_desired(broker, device, {"speed": 4})
    client = await broker.connected(device, "d")
    assert await client.subscribe(f"{twin(device)}/update/delta", 1) == 1
    got = await client.next_message()
    assert json.loads(got.payload) == {
        "delta": {"speed": 4},
        "version": 1,
        "timestamp": broker.site.services.twins.current(device.id).updated_date,
    }


async def test_a_device_catches_up_when_it_reconnects(broker: Harness) -> None:
    """A persistent session holds its subscription: coming back is enough."""
    device = await broker.device("pump")
    client = await listening(broker, device, "keeper", clean=False)
    await client.close()
    await set_desired(broker, device, {"speed": 5})  # while it is away
    back = broker.client("keeper", **device.login, clean=False)
    assert await back.connect() == (0, True)
    deltas = []
    while not deltas or deltas[-1]["version"] != 1 or back.messages.qsize():
        topic, body = await reply(back)
        assert topic == f"{twin(device)}/update/delta"
        deltas.append(body)
    assert {d["version"] for d in deltas} == {1} and deltas[-1]["delta"] == {"speed": 5}


async def test_no_delta_when_nothing_differs(broker: Harness) -> None:
    device = await broker.device("pump")
    client = await listening(broker, device)
    await client.publish(f"{twin(device)}/update", b'{"reported": {"speed": 4}}', 1)
    await reply(client)
    await set_desired(broker, device, {"speed": 4})
    await client.publish(f"{twin(device)}/get", b"{}", 1)
    topic, _ = await reply(client)
    assert topic == f"{twin(device)}/get/accepted"  # the delta would have come first


async def test_only_the_device_itself_asks_and_only_the_server_answers(
    broker: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    device = await broker.device("pump")
    client = await listening(broker, device)
    tool = broker.client("tool", username="admin", password=broker.admin_token)
    assert (await tool.connect())[0] == 0
    assert await tool.subscribe(f"{twin(device)}/#", 1) == 1
    other = await broker.connected(await broker.device("other", EVERYTHING), "other")
    forged = b'{"reported": {"speed": 99}, "desired": {"speed": 99}}'
    base = twin(device)
    with caplog.at_level(logging.WARNING, "edge.mqtt"):
        for sender in (tool, other):
            for rest in ("get", "update", "update/delta", "update/accepted", "get/rejected"):
                await sender.publish(f"{base}/{rest}", forged, 1)
        for rest in ("update/delta", "update/accepted", "get/accepted"):
            await client.publish(f"{base}/{rest}", forged, 1)  # the device itself
    assert broker.stats.refused_publishes == 13
    assert caplog.text.count("reserved for the device's own sessions") == 4
    assert caplog.text.count("reserved for the server") == 9
    assert broker.site.services.twins.current(device.id).version == 0
    await client.publish(f"{base}/get", b"{}", 1)
    topic, _ = await reply(client)  # nothing forged came before the server's answer
    assert topic == f"{base}/get/accepted"
    assert client.messages.empty()
    assert tool.messages.empty()  # the request and its answer are the device's alone


def _subscribed(port: int, login: dict[str, str], topic: str) -> socket.socket:
    """A raw client (a blocking socket), connected and subscribed to `topic` at QoS 1."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=15)
    sock.sendall(packets.connect("raw", login["username"], login["password"]))
    assert sock.recv(4)[:2] == b"\x20\x02"
    sock.sendall(packets.subscribe(1, [(topic, 1)]))
    assert sock.recv(5) == b"\x90\x03\x00\x01\x01"
    return sock


async def test_the_delta_is_on_the_wire_before_the_update_returns(broker: Harness) -> None:
    """An accepted update of `desired` hands its delta to the device's socket before its
    caller (the PATCH's handler) goes on: the socket has it while the event loop is
    still held here. The broker gathered it until the end of the loop's round, so the
    delta left after the PATCH's whole HTTP answer had been made and written (#29)."""
    device = await broker.device("pump")
    delta = f"{twin(device)}/update/delta"
    sock = await asyncio.to_thread(_subscribed, broker.ports["mqtt"], device.login, delta)
    services = broker.site.services
    record = services.db.read(lambda c: device_store.get(c, device.id))
    assert record is not None
    with sock:
        await services.twins.apply(record, Update({"desired": {"speed": 3}}, None))
        sock.settimeout(5)  # the loop does not turn while this waits: only what was written
        assert sock.recv(1) == b"\x32"  # PUBLISH at QoS 1
        length, shift, digit = 0, 0, 0x80
        while digit & 0x80:
            digit = sock.recv(1)[0]
            length, shift = length | (digit & 0x7F) << shift, shift + 7
        body = sock.recv(length, socket.MSG_WAITALL)
    size = int.from_bytes(body[:2], "big")
    assert body[2 : 2 + size].decode() == delta
    assert json.loads(body[4 + size :])["delta"] == {"speed": 3}


def _subscribe_flood(port: int, login: dict[str, str], topic: str, count: int) -> list[int]:
    """CONNECT, `count` SUBSCRIBEs to `topic` in one write, then PINGREQ: the kinds of the
    packets the broker sends back up to its PINGRESP (after everything the SUBSCRIBEs
    brought)."""
    flood = b"".join(packets.subscribe(i + 1, [(topic, 0)]) for i in range(count))
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(packets.connect("flood", login["username"], login["password"]))
        assert sock.recv(4)[:2] == b"\x20\x02"
        sock.sendall(flood + b"\xc0\x00")
        data, pos, kinds = b"", 0, []
        while not kinds or kinds[-1] != PINGRESP:
            chunk = sock.recv(65536)
            assert chunk, "the broker closed the connection"
            data += chunk
            while (frame := frames.next_frame(data, pos, 1 << 20)) is not None:
                kinds.append(data[pos] >> 4)
                pos = frame[1]
        return kinds


@pytest.mark.world(mqtt_rate_limit=10)
async def test_subscribes_are_paced_and_a_repeated_one_sends_no_second_delta(
    broker: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SUBSCRIBE counts toward the rate limit as PUBLISH does, and a session is sent the
    delta once per twin version however often it subscribes (#29 F6: each of 5,000
    SUBSCRIBEs read the twin and sent the whole delta, unpaced)."""
    pauses: list[float] = []

    async def record(seconds: float) -> None:  # the pause is recorded, not waited for
        pauses.append(seconds)

    monkeypatch.setattr(inbound, "pause", record)
    device = await broker.device("pump")
    await set_desired(broker, device, {"speed": 3})
    delta = f"{twin(device)}/update/delta"
    kinds = await asyncio.to_thread(_subscribe_flood, broker.ports["mqtt"], device.login, delta, 30)
    assert kinds.count(SUBACK) == 30
    assert kinds.count(frames.PUBLISH) == 1, kinds
    assert pauses, "thirty SUBSCRIBEs at a rate of ten a second were not paced"
