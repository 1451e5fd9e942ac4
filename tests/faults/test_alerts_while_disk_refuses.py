"""The operator alert of a write the disk refused (507, or 503 for a folder that refuses
writes) is not lost for want of the outbox, which is in the database: it is held in
memory, logged at once, and queued once a write succeeds again; a bounded number of them;
one still held when the server stops is logged whole."""

from __future__ import annotations

import pytest

from edge.app import Site
from edge.delivery import alerts as alerts_module
from edge.delivery.alerts import PURPOSE
from storage import outbox
from tests.faults.disk import FULL, READ_ONLY, Disk, disk  # noqa: F401
from tests.faults.test_disk_faults import admin_of, data
from tests.waiting import eventually
from tests.world import World

# The faulty disk is under the site from its first connection on.
pytestmark = pytest.mark.usefixtures("disk")


def queued(site: Site) -> list[dict[str, object]]:
    return site.services.db.read(lambda c: outbox.by_purpose(c, PURPOSE))


async def test_the_alert_of_a_refused_write_is_held_then_queued_once_the_disk_is_back(
    world: World,
    disk: Disk,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(alerts_module, "RETRY_SECONDS", 0.01)
    alerts = world.site.services.alerts
    call = await admin_of(world)
    disk.fault = FULL
    assert (await call("PUT", data(world, "a"), json={"value": 1}))[0] == 507
    await eventually(lambda: len(alerts.held) == 1, "len(alerts.held) == 1")
    assert "operator alert held in memory" in caplog.text
    refused = disk.refused
    # tried again, and refused again
    await eventually(lambda: disk.refused > refused, "disk.refused > refused")
    assert queued(world.site) == [] and len(alerts.held) == 1
    disk.fault = None  # space returns: the next try queues it
    await eventually(lambda: not alerts.held, "not alerts.held")
    [mail] = queued(world.site)
    assert str(mail["subject"]).startswith("edge: 507 on PUT /v2/groups/")
    assert "waited in memory" in str(mail["body_text"])
    assert mail["status"] == "pending"


async def test_held_alerts_are_bounded(
    site: Site,
    disk: Disk,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(alerts_module, "HELD_LIMIT", 2)
    monkeypatch.setattr(alerts_module, "RETRY_SECONDS", 60)  # no retry during the test
    alerts = site.services.alerts
    disk.fault = READ_ONLY
    for n in range(5):
        alerts.report(503, "PUT", f"/v2/route-{n}", f"req-{n}")
    await eventually(
        lambda: len(alerts.held) + alerts.dropped == 5, "len(alerts.held) + alerts.dropped == 5"
    )
    # The five refusals come back from the writer in any order: two are held, three dropped.
    subjects = {f"edge: 503 on PUT /v2/route-{n}" for n in range(5)}
    held = {str(m["subject"]) for m in alerts.held}
    assert len(held) == 2 and held <= subjects
    assert alerts.dropped == 3
    dropped = [line for line in caplog.text.splitlines() if "operator alert dropped" in line]
    assert {line.split("writes): ", 1)[1] for line in dropped} == subjects - held
    disk.fault = None
    assert await alerts.flush() == 2
    assert len(queued(site)) == 2 and alerts.held == []
    await alerts.drain()


async def test_an_alert_still_held_when_the_server_stops_is_logged_whole(
    site: Site,
    disk: Disk,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    alerts = site.services.alerts
    disk.fault = FULL
    alerts.report(507, "PUT", "/v2/groups/{group_id}/data/{path}", "req-lost")
    await eventually(lambda: len(alerts.held) == 1, "len(alerts.held) == 1")
    await alerts.drain()  # the server stops with the disk still full
    assert "operator alert lost" in caplog.text
    assert "edge: 507 on PUT /v2/groups/{group_id}/data/{path}" in caplog.text
    assert "req-lost" in caplog.text  # the whole mail, request ID included
