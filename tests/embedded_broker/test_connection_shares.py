"""One account, or one client address, may hold only its share of the broker's connections
(#29). One device's API key inventing client IDs (clean sessions were never counted) once
took all of `mqtt_max_connections`, and every other device of the site, its org's and
other orgs', was closed at CONNECT. Now an account holds at most
`mqtt_account_connections` (clean and persistent sessions, every listener), an address at
most `mqtt_max_connections_per_address`; the refusals are counted in GET /metrics."""

from __future__ import annotations

import asyncio
import socket

import pytest

from embedded_broker.admission import Admission
from tests.api.test_metrics import scrape, value
from tests.embedded_broker import packets
from tests.embedded_broker.conftest import Harness
from tests.embedded_broker.test_account_limits import refusals
from tests.embedded_broker.test_connect import first_bytes_back

SERVER_UNAVAILABLE = 3
CONNACK_OK = b"\x20\x02\x00\x00"


class Raw:
    """A connection held open by raw packets: what an attacker's script would hold."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=15)

    def connect(self, client_id: str, login: dict[str, str], clean: bool = True) -> bytes:
        """CONNECT; the CONNACK (b"" when the broker closed the connection)."""
        user, password = login["username"], login["password"]
        self.sock.sendall(packets.connect(client_id, user, password, clean=clean, keep_alive=0))
        try:
            return self.sock.recv(4)
        except ConnectionResetError:
            return b""

    def close(self) -> None:
        self.sock.close()


def admission(broker: Harness) -> Admission:
    assert broker.mqtt.broker is not None
    return broker.mqtt.broker.admission


async def held(port: int, client_id: str, login: dict[str, str], clean: bool = True) -> Raw:
    """A connection accepted with this client ID, kept open."""
    raw = await asyncio.to_thread(Raw, port)
    assert await asyncio.to_thread(raw.connect, client_id, login, clean) == CONNACK_OK
    return raw


async def refused(port: int, client_id: str, login: dict[str, str], clean: bool = True) -> bytes:
    raw = await asyncio.to_thread(Raw, port)
    try:
        return await asyncio.to_thread(raw.connect, client_id, login, clean)
    finally:
        raw.close()


@pytest.mark.world(mqtt_account_connections=3, mqtt_max_connections=10)
async def test_one_account_holds_at_most_its_connections(broker: Harness) -> None:
    port = broker.ports["mqtt"]
    attacker = await broker.device("attacker")
    neighbour, foreign = await broker.device("neighbour"), await broker.device("f", other_org=True)
    over_ws = broker.client("ws-1", "mqtt-ws", **attacker.login)  # every listener counts
    assert (await over_ws.connect())[0] == 0
    mine = [await held(port, f"c{i}", attacker.login) for i in range(2)]
    over = await refused(port, "c2", attacker.login)
    assert over == bytes((0x20, 2, 0, SERVER_UNAVAILABLE))  # a clean session past the cap
    kept = await refused(port, "p", attacker.login, clean=False)
    assert kept == bytes((0x20, 2, 0, SERVER_UNAVAILABLE))  # and a persistent one
    assert await refusals(broker, "connections") == 2
    others = [await held(port, "main", d.login) for d in (neighbour, foreign)]
    again = await held(port, "c0", attacker.login)  # taking over its own client ID: let in
    await asyncio.to_thread(mine[1].close)
    await broker.until(lambda: admission(broker).held_by(attacker.id) == 2)
    mine.append(await held(port, "c3", attacker.login))  # a closed one made room
    assert admission(broker).held_by(attacker.id) == 3
    for raw in [*mine, *others, again]:
        raw.close()


@pytest.mark.world(mqtt_max_connections_per_address=2)
async def test_one_address_holds_at_most_its_connections(broker: Harness) -> None:
    port = broker.ports["mqtt"]
    silent = [await asyncio.to_thread(socket.create_connection, ("127.0.0.1", port)) for _ in "ab"]
    assert await asyncio.to_thread(first_bytes_back, port) == b""  # closed before any CONNECT
    staff = await broker.app_api.token()
    metrics = await scrape(broker.app_api, staff)
    assert value(metrics, "edge_mqtt_address_refusals_total") == 1
    assert broker.stats.refused_connects == 1
    silent.pop().close()
    await broker.until(lambda: admission(broker).live == 1)
    device = await broker.device("dev1")
    raw = await held(port, "one", device.login)  # its address has room again
    raw.close()
    for sock in silent:
        sock.close()
