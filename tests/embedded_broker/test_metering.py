"""MQTT messages reach the billing meter: the reader adds each chunk's PUBLISH count to
the client's session, and the meter settles and reads those counters on its flush; a
connection that ends first hands its count over as it closes (docs/billing.md)."""

from __future__ import annotations

from datetime import timedelta

from edge.kernel import clock
from tests.embedded_broker.conftest import Harness


def usage(broker: Harness, org_id: str) -> int:
    found = broker.site.services.db.read(
        lambda c: c.execute(
            "SELECT coalesce(sum(quantity), 0) FROM billing_usage"
            " WHERE org_id = ? AND meter = 'mqtt_messages'",
            (org_id,),
        ).fetchone()
    )
    return int(found[0])


async def test_published_messages_are_metered_per_org(broker: Harness) -> None:
    plant, lab = broker.org_id, broker.other_org_id  # the harness's two organizations
    press = await broker.device("press")
    scope = await broker.device("scope", other_org=True)
    one = await broker.connected(press, "press")
    two = await broker.connected(scope, "scope")
    for n in range(30):
        await one.publish(f"{press.root}/sensors/t", b"%d" % n, 1)
    for n in range(4):
        await two.publish(f"{scope.root}/sensors/t", b"%d" % n, 1)
    meter = broker.site.services.meter
    done = await meter.flush()
    assert done.messages == 34
    assert (usage(broker, plant), usage(broker, lab)) == (30, 4)
    assert (await meter.flush()).messages == 0  # read once, not twice

    # a connection that ends between two flushes: its count is not lost
    for n in range(5):
        await one.publish(f"{press.root}/sensors/t", b"%d" % n, 1)
    await one.close()
    await broker.until(lambda: broker.session(press.id, "press") is None)
    assert (await meter.flush()).messages == 5
    assert usage(broker, plant) == 35

    # a refused publish (outside the device's scopes) is still a message the broker read
    await two.publish(f"{scope.root}/elsewhere", b"x", 1)
    await meter.flush()
    assert usage(broker, lab) == 5


async def test_metered_messages_are_debited_when_the_day_closes(broker: Harness) -> None:
    plant = broker.org_id
    press = await broker.device("press")
    client = await broker.connected(press, "press")
    for n in range(1001):
        await client.publish(f"{press.root}/sensors/t", b"%d" % n, 0 if n else 1)
    await client.publish(f"{press.root}/sensors/t", b"last", 1)  # all before are read
    meter = broker.site.services.meter
    await meter.flush()
    clock.advance(timedelta(days=1))
    done = await meter.flush()
    assert done.debits >= 1  # the day's other meters (users, devices) are debited too
    entries = broker.site.services.db.read(
        lambda c: c.execute(
            "SELECT meter, quantity, points FROM billing_entries WHERE org_id = ?"
            " AND meter = 'mqtt_messages'",
            (plant,),
        ).fetchall()
    )
    assert entries == [("mqtt_messages", 1002, -2)]  # 1,002 messages at 1 per 1,000
