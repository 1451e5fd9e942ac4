"""edge/ops/health.py: the status a probe's findings add up to, readiness, the report's
shape, and what a change of health logs."""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from edge.ops import health as health_module
from edge.ops.health import Health, Probe
from tests.edge.rooms import Room


def test_status_follows_the_components_and_stopping_wins() -> None:
    health = Health()
    assert (health.status, health.ready) == ("starting", False)
    assert health.report() == {"status": "starting"}
    health.components, health.checked = {"database": "ok", "writer": "ok"}, "now"
    assert (health.status, health.ready) == ("ok", True)
    health.components["writer"] = "full"
    assert health.status == "degraded" and not health.ready
    assert health.not_ready() == "Not ready: writer full"
    assert list(health.report()) == ["status", "database", "writer", "checked"]
    health.stopping = True
    assert health.not_ready() == "Not ready: stopping"


async def test_a_probe_of_a_sound_site_finds_every_part_ok(room: Room) -> None:
    health = Health()
    await Probe(room.services.db, health, broker=lambda: "ok").once()
    assert health.components == {"database": "ok", "writer": "ok", "storage": "ok", "mqtt": "ok"}
    assert health.ready and health.checked is not None
    await Probe(room.services.db, health).once()
    assert "mqtt" not in health.components  # every listener turned off


async def test_a_failing_broker_probe_is_a_finding(room: Room) -> None:
    def broken() -> str:
        raise RuntimeError("gone")

    health = Health()
    await Probe(room.services.db, health, broker=broken).once()
    assert health.components["mqtt"] == "failing (RuntimeError)"
    assert health.status == "degraded"


async def test_a_closed_database_is_unavailable_and_logged_once(
    room: Room, caplog: pytest.LogCaptureFixture
) -> None:
    health = Health()
    probe = Probe(room.services.db, health)
    with caplog.at_level(logging.INFO, logger="edge.health"):
        await probe.once()
        assert caplog.records == []  # a clean first reading logs nothing
        room.services.db.close()
        await probe.once()
        await probe.once()  # no change: no second line
    assert health.components["database"] == "unavailable"
    assert health.components["writer"] != "ok"
    assert [r.levelno for r in caplog.records] == [logging.WARNING]


async def test_a_recovery_is_logged_at_info(room: Room, caplog: pytest.LogCaptureFixture) -> None:
    state = {"mqtt": "starting"}
    health = Health()
    probe = Probe(room.services.db, health, broker=lambda: state["mqtt"])
    with caplog.at_level(logging.INFO, logger="edge.health"):
        await probe.once()  # starting is not a failure
        state["mqtt"] = "ok"
        await probe.once()
    assert [r.levelno for r in caplog.records] == [logging.INFO]


async def test_health_changes_are_warnings_only_when_a_part_gets_worse(
    room: Room, caplog: pytest.LogCaptureFixture
) -> None:
    broker = ["ok"]
    watched = Probe(room.services.db, Health(), broker=lambda: broker[0])
    with caplog.at_level(logging.INFO, logger="edge.health"):
        await watched.once()  # the first reading, all well: nothing to say
        broker[0] = "not listening"
        await watched.once()  # worse
        await watched.once()  # unchanged: nothing logged
        broker[0] = "ok"
        await watched.once()  # recovered
    lines = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in lines] == [logging.WARNING, logging.INFO]
    assert lines[0][1].endswith("mqtt not listening") and lines[1][1].endswith("mqtt ok")


async def test_a_first_reading_that_finds_a_part_failing_is_a_warning(
    room: Room, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="edge.health"):
        await Probe(room.services.db, Health(), broker=lambda: "not listening").once()
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "health changed: database ok, writer ok, storage ok, mqtt not listening")
    ]


async def test_a_busy_default_pool_does_not_make_a_sound_disk_stalled(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every thread of the loop's default executor is held by other work (pictures decoded,
    files read): the storage check still runs, on its own thread, and finds the disk ok.
    On the shared pool it waited behind that work until STORAGE_SECONDS ran out."""
    # Time enough for a loaded machine's fsync, and still less than the pool is held (30 s):
    # a check queued behind that work is stalled.
    monkeypatch.setattr(health_module, "STORAGE_SECONDS", 10.0)
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(1)
    loop.set_default_executor(pool)
    release = threading.Event()
    held = loop.run_in_executor(None, release.wait, 30)
    try:
        health = Health()
        await Probe(room.services.db, health).once()
        assert health.components["storage"] == "ok", health.components
        assert not held.done()  # the pool was busy the whole time
    finally:
        release.set()
        await held
        pool.shutdown()
