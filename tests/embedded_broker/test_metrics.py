"""GET /metrics follows the broker: connections, messages in and out, refusals."""

from __future__ import annotations

from tests.api.test_metrics import scrape, value
from tests.embedded_broker.conftest import Harness


async def test_broker_figures_follow_real_clients(broker: Harness) -> None:
    staff = await broker.app_api.token()
    before = await scrape(broker.app_api, staff)
    assert value(before, "edge_mqtt_connections") == 0
    device = await broker.device("meter")
    client = await broker.connected(device, "m1")
    topic = f"{device.root}/sensors/temp"
    assert await client.subscribe(topic, 1) == 1
    await client.publish(topic, b"21.5", 1)
    assert (await client.next_message()).payload == b"21.5"
    during = await scrape(broker.app_api, staff)
    refused = broker.client("intruder", username=device.id, password="edk_" + "x" * 40)
    assert (await refused.connect())[0] != 0
    await client.close()
    await broker.until(lambda: broker.mqtt.broker is not None and broker.mqtt.broker.live == 0)
    after = await scrape(broker.app_api, staff)

    assert value(during, "edge_mqtt_connections") == 1
    assert value(after, "edge_mqtt_connections") == 0
    for name in ("edge_mqtt_connects_total", "edge_mqtt_received_total", "edge_mqtt_sent_total"):
        assert value(during, name) - value(before, name) == 1, name
    assert value(after, "edge_mqtt_refused_connects_total") == 1 + value(
        during, "edge_mqtt_refused_connects_total"
    )
    assert ("edge_mqtt_dropped_total", frozenset({("reason", "qos0")})) in after
