"""/v2/health says when the disk is full or the data folder refuses writes (the probe's
small write and the writer's one-page commit meet the same faults as every client's write),
and says ok again once the disk is back, without a restart; meanwhile /v2/health/ready is
a 503 naming the reason."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from api.keys import SERVICES
from edge.app import PROBE, Site, _sweep
from storage import challenges, layout
from storage.space import NotWritable
from tests.conftest import Api
from tests.faults.disk import FULL, IO_ERROR, READ_ONLY, Disk, disk  # noqa: F401
from tests.rows import Rows

# The faulty disk is under the site from its first connection on.
pytestmark = pytest.mark.usefixtures("disk")


@pytest.mark.parametrize(
    ("fault", "state"), [(FULL, "full"), (READ_ONLY, "not writable"), (IO_ERROR, "not writable")]
)
async def test_health_names_a_disk_that_refuses_writes_then_recovers(
    api: Api,
    app: web.Application,
    disk: Disk,  # noqa: F811
    data_dir: Path,
    fault: str,
    state: str,
) -> None:
    disk.fault = fault
    await app[PROBE].once()
    status, body = await api.call("GET", "/v2/health")
    assert status == 200
    assert (body["status"], body["storage"], body["writer"]) == ("degraded", state, state)
    assert body["database"] == "ok"  # reads work
    assert await api.call("GET", "/v2/health/ready") == (
        503,
        {"message": f"Not ready: writer {state}, storage {state}"},
    )
    disk.fault = None  # space (or write access) returns
    await app[PROBE].once()
    status, body = await api.call("GET", "/v2/health")
    assert (body["status"], body["storage"], body["writer"]) == ("ok", "ok", "ok")
    assert (await api.call("GET", "/v2/health/ready"))[0] == 200
    assert list((data_dir / layout.TMP_DIR).iterdir()) == []  # the check leaves no file


async def test_a_database_that_alone_refuses_writes_fails_the_writer_probe(
    api: Api,
    app: web.Application,
    disk: Disk,  # noqa: F811
) -> None:
    """The folder still takes a block, SQLite takes nothing: the writer probe committed an
    empty transaction, which writes nothing, and called such a disk ok."""
    disk.sqlite_only, disk.fault = True, FULL
    await app[PROBE].once()
    _, body = await api.call("GET", "/v2/health")
    assert (body["status"], body["writer"], body["storage"]) == ("degraded", "full", "ok")
    disk.fault = None
    await app[PROBE].once()
    _, body = await api.call("GET", "/v2/health")
    assert (body["status"], body["writer"]) == ("ok", "ok")


@pytest.mark.parametrize("queued", [False, True], ids=["written", "submitted"])
async def test_a_client_write_refused_between_two_probes_shows_at_the_next(
    api: Api,
    app: web.Application,
    disk: Disk,  # noqa: F811
    queued: bool,
) -> None:
    """A large write may need room the probe's one page does not: a refusal any write met
    since the last probe is reported by the next one, then cleared by the one after. A
    write queued with `submit` (the broker's sessions, presence) is one such write: it
    raised apsw's own error and went unseen."""
    await app[PROBE].once()
    db = app[SERVICES].db

    def change(c: Any) -> None:
        c.execute("CREATE TABLE refused (a)")

    disk.sqlite_only, disk.fault = True, READ_ONLY
    with pytest.raises(NotWritable):
        await (db.submit(change) if queued else db.write(change))
    disk.fault = None  # before the probe: its own write goes through
    await app[PROBE].once()
    _, body = await api.call("GET", "/v2/health")
    assert (body["status"], body["writer"]) == ("degraded", "not writable")
    await app[PROBE].once()
    _, body = await api.call("GET", "/v2/health")
    assert (body["status"], body["writer"]) == ("ok", "ok")


async def test_an_hourly_sweep_the_disk_refuses_is_logged_and_the_sweeps_go_on(
    app: web.Application,
    site: Site,
    disk: Disk,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The sweep's write refused by a full disk ended its loop: no later sweep ran, and
    the refusal was raised again when the server stopped (a teardown error in a full run,
    where the disk filled before the first sweep had written)."""
    rows = Rows(site)
    rows.org()
    user_id = rows.user()
    expired = {"session_hash": "h", "kind": "totp", "user_id": user_id, "org_id": rows.org_id}
    expired["expires_at"] = "2000-01-01T00:00:00.000Z"  # the sweep has a row to delete
    rows.db.write_sync(lambda c: challenges.create(c, expired))
    disk.fault = FULL
    stop = asyncio.Event()
    with caplog.at_level(logging.WARNING, logger="edge"):
        sweeps = asyncio.create_task(_sweep(app[SERVICES], stop))
        for _ in range(1000):
            if "hourly sweep waits" in caplog.text or sweeps.done():
                break
            await asyncio.sleep(0.01)
        assert not sweeps.done()  # still waiting for the next hour
        stop.set()
        await sweeps  # ended by being asked to, not by the refusal
    disk.fault = None
    assert "hourly sweep waits: the disk refuses writes" in caplog.text
