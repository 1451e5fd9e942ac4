"""/v2/health reports the database, the writer and the broker from a background probe (a
200 with the SDK's HealthInfo shape while serving, HEAD too); /v2/health/ready is 503
while any part is not ok, or while stopping."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from api.keys import SERVICES
from api.system import HEALTH
from edge.app import MQTT, PROBE, create_app
from edge.ops import health as health_module
from edge.ops.health import Probe
from tests.conftest import Api
from tests.factory import new_site
from tests.ports import free_port
from tests.waiting import eventually


async def probe(app: web.Application) -> None:
    await Probe(app[SERVICES].db, app[HEALTH]).once()


async def test_health_reports_each_part(api: Api) -> None:
    status, body = await api.call("GET", "/v2/health")
    assert status == 200
    assert {k: body[k] for k in ("status", "database", "writer", "storage")} == {
        "status": "ok",
        "database": "ok",
        "writer": "ok",
        "storage": "ok",
    }
    assert body["checked"].endswith("Z")


@pytest.mark.parametrize("path", ["/v2/health", "/v2/health/ready"])
async def test_head_answers_like_get_without_a_body(api: Api, path: str) -> None:
    response = await api.client.head(path)
    assert response.status == 200
    assert await response.read() == b""


async def test_ready_when_every_part_is_ok(api: Api) -> None:
    status, body = await api.call("GET", "/v2/health/ready")
    assert status == 200 and body["status"] == "ok"


async def test_a_closed_database_is_degraded_but_still_a_200(
    api: Api, app: web.Application
) -> None:
    app[SERVICES].db.close()
    await probe(app)
    status, body = await api.call("GET", "/v2/health")
    assert status == 200
    assert (body["status"], body["database"], body["writer"]) == (
        "degraded",
        "unavailable",
        "unavailable",
    )
    assert (await api.client.head("/v2/health/ready")).status == 503


async def test_a_stalled_writer_is_not_ready(
    api: Api, app: web.Application, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health_module, "WRITER_SECONDS", 0.05)
    release = asyncio.Event()
    loop = asyncio.get_running_loop()

    def hold(conn: Any) -> None:  # occupies the writer thread until released
        asyncio.run_coroutine_threadsafe(release.wait(), loop).result()

    held = asyncio.ensure_future(app[SERVICES].db.write(hold))
    await probe(app)
    status, body = await api.call("GET", "/v2/health/ready")
    assert (status, body) == (503, {"message": "Not ready: writer stalled"})
    release.set()
    await held
    monkeypatch.undo()  # the writer's own bound again: a heartbeat on a loaded machine may
    await probe(app)  # take more than 0.05 s, and then a sound writer was called stalled
    assert (await api.call("GET", "/v2/health/ready"))[0] == 200


async def test_a_storage_check_hanging_on_the_disk_is_stalled_and_not_repeated(
    api: Api, app: web.Application, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health_module, "STORAGE_SECONDS", 0.05)
    release, started = threading.Event(), []

    def hang(folder: Path) -> None:  # an fsync that does not return
        started.append(folder)
        release.wait(10)

    monkeypatch.setattr(health_module.space, "check_writable", hang)
    await app[PROBE].once()
    await app[PROBE].once()
    assert await api.call("GET", "/v2/health/ready") == (
        503,
        {"message": "Not ready: storage stalled"},
    )
    assert len(started) == 1  # the second probe did not pile another check on the disk
    release.set()
    check = app[PROBE]._storage_check
    assert check is not None
    await eventually(check.done, "the released check ended")  # its thread woke and settled
    monkeypatch.undo()
    await app[PROBE].once()
    assert (await api.call("GET", "/v2/health/ready"))[0] == 200


async def test_health_is_answered_from_the_probe_not_per_request(
    api: Api, app: web.Application, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom() -> None:
        raise AssertionError("a request must not ping the database")

    monkeypatch.setattr(app[SERVICES].db, "ping", boom)
    for _ in range(3):
        assert (await api.call("GET", "/v2/health"))[0] == 200


async def test_stopping_is_not_ready(api: Api, app: web.Application) -> None:
    app[HEALTH].stopping = True
    status, body = await api.call("GET", "/v2/health")
    assert (status, body["status"]) == (200, "stopping")
    assert await api.call("GET", "/v2/health/ready") == (503, {"message": "Not ready: stopping"})


def test_the_broker_is_absent_while_its_listeners_are_off(app: web.Application) -> None:
    assert app[MQTT].state() is None


async def test_the_broker_is_a_part_while_it_listens(aiohttp_client: Any, data_dir: Path) -> None:
    site = new_site(data_dir, mqtt_port=free_port())
    app = create_app(site)
    client = await aiohttp_client(app)
    response = await client.get("/v2/health")
    assert (await response.json())["mqtt"] == "ok"  # from the first request on
    await app[MQTT].stop()
    await app[PROBE].once()
    response = await client.get("/v2/health/ready")
    assert (response.status, await response.json()) == (
        503,
        {"message": "Not ready: mqtt stopped"},
    )


async def test_a_clean_start_logs_health_without_a_warning(
    aiohttp_client: Any, data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every clean start logged a WARNING "health changed" (the broker, `stopped` at the
    probe's first reading, then listening): news, not a warning (#25)."""
    site = new_site(data_dir, mqtt_port=free_port())
    with caplog.at_level(logging.INFO, "edge.health"):
        await aiohttp_client(create_app(site))
    lines = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "edge.health"]
    assert lines and all(level == logging.INFO for level, _ in lines), lines
    assert lines[-1][1].endswith("mqtt ok")
