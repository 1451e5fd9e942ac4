"""A full disk reaches the operator while it is full: the alert of a write the disk refused
cannot be queued (the outbox is in the database), so it goes straight to the SMTP server;
/v2/health names the failing part within a probe, and both recover once space returns
(docs/operating.md, "A full or read-only disk")."""

from __future__ import annotations

import pytest
from aiohttp import web

from edge.app import PROBE
from edge.delivery import alerts as alerts_module
from tests.conftest import Api
from tests.edge.delivery.test_delivery import MAIL, Inbox, inbox  # noqa: F401
from tests.faults.disk import FULL, READ_ONLY, Disk, disk  # noqa: F401
from tests.faults.test_alerts_while_disk_refuses import queued
from tests.faults.test_disk_faults import admin_of, data
from tests.waiting import eventually
from tests.world import World

# The faulty disk is under the site from its first connection on; mail goes to the inbox.
pytestmark = [pytest.mark.usefixtures("disk"), pytest.mark.world(**MAIL)]


@pytest.mark.parametrize(
    ("fault", "status", "state"), [(FULL, 507, "full"), (READ_ONLY, 503, "not writable")]
)
async def test_a_refusing_database_fails_health_and_its_alert_is_mailed_directly(
    world: World,
    api: Api,
    app: web.Application,
    disk: Disk,  # noqa: F811
    inbox: Inbox,  # noqa: F811
    fault: str,
    status: int,
    state: str,
) -> None:
    """SQLite refuses (SQLITE_FULL or SQLITE_READONLY from its VFS), the folder still
    takes a block: the alert was held in memory until the disk came back."""
    alerts = world.site.services.alerts
    call = await admin_of(world)
    disk.sqlite_only, disk.fault = True, fault
    assert (await call("PUT", data(world, "a"), json={"value": 1}))[0] == status
    await eventually(lambda: len(inbox.received) == 1, "len(inbox.received) == 1")
    mail = inbox.message()
    assert str(mail["Subject"]).startswith(f"edge: {status} on PUT /v2/groups/")
    assert mail["From"] == "edge@clinic.test" and b"sent directly" in mail.get_payload(decode=True)
    # counted once the SMTP send returns, which is after the inbox has the message
    await eventually(lambda: alerts.sent_directly == 1, "alerts.sent_directly == 1")
    assert alerts.held == []
    await app[PROBE].once()
    _, body = await api.call("GET", "/v2/health")
    assert (body["status"], body["writer"]) == ("degraded", state)
    assert (await api.call("GET", "/v2/health/ready"))[0] == 503
    disk.fault = None  # space returns
    await app[PROBE].once()
    _, body = await api.call("GET", "/v2/health")
    assert (body["status"], body["writer"]) == ("ok", "ok")
    assert (await call("PUT", data(world, "a"), json={"value": 1}))[0] == 200
    assert queued(world.site) == []  # mailed once, not queued again


async def test_an_alert_the_smtp_server_refuses_too_is_held_then_queued(
    world: World,
    disk: Disk,  # noqa: F811
    inbox: Inbox,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(alerts_module, "RETRY_SECONDS", 0.01)
    inbox.refuse = 1  # a 451: the direct send fails
    alerts = world.site.services.alerts
    call = await admin_of(world)
    disk.fault = FULL
    assert (await call("PUT", data(world, "a"), json={"value": 1}))[0] == 507
    await eventually(lambda: len(alerts.held) == 1, "len(alerts.held) == 1")
    assert inbox.refused == 1 and alerts.sent_directly == 0
    disk.fault = None
    await eventually(lambda: not alerts.held, "not alerts.held")
    [mail] = queued(world.site)
    assert str(mail["subject"]).startswith("edge: 507 on PUT /v2/groups/")
