"""/v2/health says when the disk is full or the data folder refuses writes (the probe's
small write meets the same faults as every client's write), and says ok again once the
disk is back, without a restart; meanwhile /v2/health/ready is a 503 naming the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import web

from edge.app import PROBE
from edge.config import Config
from storage import layout
from tests.conftest import Api, make_config
from tests.faults.disk import FULL, IO_ERROR, READ_ONLY, Disk, disk  # noqa: F401


@pytest.fixture
def config(data_dir: Path, disk: Disk) -> Config:  # noqa: F811 (the disk comes first)
    return make_config(data_dir)


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
    assert (body["status"], body["storage"]) == ("degraded", state)
    assert (body["database"], body["writer"]) == ("ok", "ok")  # reads and empty commits work
    assert await api.call("GET", "/v2/health/ready") == (
        503,
        {"message": f"Not ready: storage {state}"},
    )
    disk.fault = None  # space (or write access) returns
    await app[PROBE].once()
    status, body = await api.call("GET", "/v2/health")
    assert (body["status"], body["storage"]) == ("ok", "ok")
    assert (await api.call("GET", "/v2/health/ready"))[0] == 200
    assert list((data_dir / layout.TMP_DIR).iterdir()) == []  # the check leaves no file
