"""What the operator sees of connections (#25): one INFO line per connect and per
disconnect (the account, its name, the client ID, the listener, the address, and why it
ended), exactly one line per refusal (amqtt repeated each), MQTT 5 clients answered
CONNACK 1 at once (they waited 10 s for a dropped connection), and authentication
failures audited as one event per address and user name per minute, with a count."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import timedelta
from typing import Any

import pytest

from edge.devices import auth_failures
from edge.kernel import clock
from edge.kernel.ids import new_id
from tests.embedded_broker import packets
from tests.embedded_broker.conftest import Harness

BAD_USERNAME_PASSWORD = 4


def lines(caplog: pytest.LogCaptureFixture, level: int = logging.INFO) -> list[str]:
    """Every line logged at `level` or above, by any logger (amqtt's included)."""
    return [r.getMessage() for r in caplog.records if r.levelno >= level]


async def test_a_connect_and_its_disconnect_are_one_line_each(
    broker: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    device = await broker.device("Pump 7")
    with caplog.at_level(logging.INFO):
        client = await broker.connected(device, "c1")
        await client.close()
        await broker.until(lambda: any("mqtt disconnect" in line for line in lines(caplog)))
    said = [line for line in lines(caplog) if line.startswith("mqtt ")]
    who = f"device {device.id} (Pump 7) client id 'c1' on mqtt from 127.0.0.1:"
    assert len(said) == 2, said
    assert said[0].startswith(f"mqtt connect: {who}")
    assert said[1].startswith(f"mqtt disconnect: {who}")
    assert said[1].endswith("(the client disconnected)")


async def test_a_disconnect_says_why(broker: Harness, caplog: pytest.LogCaptureFixture) -> None:
    device = await broker.device("dev1")
    with caplog.at_level(logging.INFO, "edge.mqtt"):
        first = await broker.connected(device, "same")
        await broker.connected(device, "same")  # takes the client ID over
        await first.disconnected()
        dropped = await broker.connected(device, "dropped")
        dropped.stall()
        dropped.paho.socket().close()  # no DISCONNECT
        await broker.until(lambda: "(the connection was lost)" in caplog.text)
    assert caplog.text.count("mqtt disconnect:") == 2
    assert "(taken over by a new connection with the same client ID)" in caplog.text


async def test_each_refusal_is_one_line(broker: Harness, caplog: pytest.LogCaptureFixture) -> None:
    device = await broker.device("dev1")
    with caplog.at_level(logging.INFO):
        wrong = broker.client("w", username=device.id, password="not-the-key")
        assert (await wrong.connect())[0] == BAD_USERNAME_PASSWORD
        port = broker.ports["mqtt"]
        assert await asyncio.to_thread(packets.exchange, port, b"\x30\x02\x00\x00") == b""
        await broker.until(lambda: "not a CONNECT" in caplog.text)  # logged as it closes
    said = lines(caplog)
    assert len(said) == 2, said
    assert said[0].startswith(
        "mqtt connection refused (user name and password not accepted, CONNACK 4): client id 'w'"
    )
    assert said[1].startswith("mqtt connection refused (the first packet is not a CONNECT")


async def test_an_mqtt5_client_gets_connack_1_and_the_connection_closed(
    broker: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    device = await broker.device("dev1")
    connect = packets.connect("v5", device.id, device.api_key, level=5, properties=b"\x00")
    with caplog.at_level(logging.INFO):
        answer = await asyncio.to_thread(packets.exchange, broker.ports["mqtt"], connect)
        await broker.until(lambda: "refused" in caplog.text)
    assert answer == b"\x20\x02\x00\x01"  # unacceptable protocol version, then closed
    assert broker.stats.refused_connects == 1
    assert lines(caplog) == [
        f"mqtt connection refused (MQTT protocol level 5 is not served, CONNACK 1):"
        f" from {lines(caplog)[0].split(' from ')[1]}"
    ]
    assert lines(caplog)[0].endswith(" on mqtt")


def audited(broker: Harness) -> list[dict[str, Any]]:
    rows = broker.site.services.db.read(
        lambda c: c.execute(
            "SELECT client, details, actor_kind FROM audit_events WHERE action = ? ORDER BY rowid",
            ("mqtt_auth_failed",),
        ).fetchall()
    )
    return [{"client": c, "actor": a, **json.loads(d)} for c, d, a in rows]


async def failures(broker: Harness, count: int, username: str, password: str = "wrong") -> None:
    for _ in range(count):
        client = broker.client(username=username, password=password)
        assert (await client.connect())[0] == BAD_USERNAME_PASSWORD


async def test_authentication_failures_are_one_audit_event_per_address_name_and_minute(
    broker: Harness,
) -> None:
    clock.freeze()  # one minute for the whole test, until the clock is moved
    device = await broker.device("dev1")
    await failures(broker, 5, device.id)
    stranger = new_id()  # an ID no account has
    await failures(broker, 2, stranger)
    await broker.until(lambda: len(audited(broker)) == 2)
    assert [(e["username"], e["count"]) for e in audited(broker)] == [
        (device.id, 1),  # written at the first failure, so an attack shows at once
        (stranger, 1),
    ]
    clock.advance(timedelta(minutes=1))
    await failures(broker, 1, device.id)  # the next minute: the last one's counts are written
    await broker.until(lambda: len(audited(broker)) == 3 and audited(broker)[0]["count"] == 5)
    found = audited(broker)
    assert [(e["username"], e["count"]) for e in found] == [
        (device.id, 5),
        (stranger, 2),
        (device.id, 1),
    ]
    assert {(e["client"], e["actor"]) for e in found} == {("127.0.0.1", "anonymous")}
    assert "wrong" not in json.dumps(found)  # never the password


async def test_a_stranger_trying_many_names_fills_no_table(broker: Harness) -> None:
    clock.freeze()
    names = [new_id() for _ in range(auth_failures.NAMES_PER_ADDRESS + 5)]
    for name in names:
        await failures(broker, 1, name)
    await failures(broker, 3, names[-1])
    directory: Any = broker.directory
    directory._failures.close_minute()

    def others() -> list[dict[str, Any]]:
        return [e for e in audited(broker) if e["username"] == auth_failures.OTHERS]

    # The writes land in their own time (on a loaded machine, after close_minute returns).
    await broker.until(lambda: [e["count"] for e in others()] == [8])  # 5 names, 3 more tries
    assert len(audited(broker)) == auth_failures.NAMES_PER_ADDRESS + 1


async def test_a_user_name_that_is_no_id_is_not_kept(broker: Harness) -> None:
    """An API key typed into the user name (the fields swapped) must not reach the audit
    log, nor its backups: only IDs are kept, the rest is one marker."""
    clock.freeze()
    device = await broker.device("dev1")
    key = device.api_key
    await failures(broker, 2, key, password=device.id)  # the fields swapped
    await failures(broker, 1, "ops@example.test")
    await broker.until(lambda: sum(e["count"] for e in audited(broker)) >= 1)
    broker.directory._failures.close_minute()  # type: ignore[attr-defined]
    await broker.until(lambda: [e["count"] for e in audited(broker)] == [3])
    assert [e["username"] for e in audited(broker)] == [auth_failures.NOT_AN_ID]
    assert key not in json.dumps(audited(broker))
