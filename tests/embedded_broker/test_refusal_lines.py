"""Refused connections cannot flood the log (#29): a host connecting in a loop was one
WARNING line per attempt, thousands a second. Now each kind of refusal from one address
is logged at once, then at most once a minute with the count of refusals it stands for;
GET /metrics counts every one. Other loopback addresses (127.0.0.2) stand for a second
host."""

from __future__ import annotations

import asyncio
import logging
import socket
from datetime import timedelta

import pytest

from edge.kernel import clock
from embedded_broker.refusal_lines import LOG_SECONDS, RefusalLines
from tests.api.test_metrics import scrape, value
from tests.embedded_broker import packets
from tests.embedded_broker.conftest import Harness

HERE, THERE = "127.0.0.1", "127.0.0.2"
BAD_USERNAME_PASSWORD = b"\x20\x02\x00\x04"
LATER = timedelta(seconds=LOG_SECONDS + 1)


def said(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if text in r.getMessage()]


async def refused_connects(broker: Harness) -> float:
    staff = await broker.app_api.token()
    return value(await scrape(broker.app_api, staff), "edge_mqtt_refused_connects_total")


async def knock(port: int, times: int, source: str, data: bytes = b"") -> list[bytes]:
    """Connections from `source`, each sending `data`; what each got back."""
    return [await asyncio.to_thread(packets.exchange, port, data, 4, source) for _ in range(times)]


def hold(port: int, source: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), 15, (source, 0))


@pytest.mark.world(mqtt_max_connections_per_address=1)
async def test_refusals_at_the_address_limit_are_one_line_a_minute(
    broker: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    clock.freeze()
    port = broker.ports["mqtt"]
    held = [await asyncio.to_thread(hold, port, source) for source in (HERE, THERE)]
    await broker.until(lambda: broker.mqtt.broker is not None and broker.mqtt.broker.live == 2)
    with caplog.at_level(logging.INFO, "edge.mqtt"):
        assert await knock(port, 50, HERE) == [b""] * 50  # closed before any CONNECT
        assert await refused_connects(broker) == 50  # every one counted
        first = said(caplog, f"connection from {HERE} refused")
        assert first == [
            f"mqtt: connection from {HERE} refused, {HERE} already holds 1 connections"
        ]
        await knock(port, 1, THERE)
        assert len(said(caplog, f"connection from {THERE} refused")) == 1  # its own line
        clock.advance(LATER)
        await knock(port, 1, HERE)
    lines = said(caplog, f"connection from {HERE} refused")
    assert len(lines) == 2, lines
    assert lines[1].endswith("(50 such refusals since the last line)")  # 49 unlogged, and it
    assert await refused_connects(broker) == 52
    for sock in held:
        sock.close()


async def test_bad_credentials_are_one_line_a_minute(
    broker: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    clock.freeze()
    port = broker.ports["mqtt"]
    device = await broker.device("dev1")
    wrong = packets.connect("x", device.id, "not-the-key")
    refusal = "mqtt connection refused (user name and password not accepted, CONNACK 4)"
    with caplog.at_level(logging.INFO, "edge.mqtt"):
        assert await knock(port, 50, HERE, wrong) == [BAD_USERNAME_PASSWORD] * 50
        assert await refused_connects(broker) == 50
        assert len(said(caplog, refusal)) == 1
        await knock(port, 1, THERE, wrong)
        assert len(said(caplog, f"from {THERE}:")) == 1  # another address, its own line
        clock.advance(LATER)
        await knock(port, 1, HERE, wrong)
    lines = [line for line in said(caplog, refusal) if f"from {HERE}:" in line]
    assert len(lines) == 2, lines
    assert lines[0].endswith(" on mqtt")  # the first says no count
    assert lines[1].endswith(" on mqtt (50 such refusals since the last line)")
    assert await refused_connects(broker) == 52


def test_the_table_of_keys_is_bounded() -> None:
    clock.freeze()
    lines = RefusalLines(max_keys=3)
    assert [lines.due(("address", f"10.0.0.{n}")) for n in range(5)] == [1] * 5
    assert len(lines) == 3  # the keys whose lines are oldest were forgotten
    assert lines.due(("address", "10.0.0.4")) == 0  # kept: counted, not logged
    assert lines.due(("address", "10.0.0.0")) == 1  # forgotten: logged anew
    clock.advance(LATER)
    assert lines.due(("address", "10.0.0.4")) == 2
