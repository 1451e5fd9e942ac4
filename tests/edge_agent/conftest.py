"""The fixtures of the agent's process tests that provision a device from a claim."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from edge.kernel.config import Config
from tests.edge_agent.processes import CLAIMS, Bench, Served
from tests.world import World


@pytest.fixture
async def bench(
    aiohttp_server: Any, aiohttp_client: Any, config: Config, world_template: World, tmp_path: Path
) -> AsyncIterator[Bench]:
    served = Served(config, world_template, aiohttp_server, aiohttp_client)
    world = await served.start()
    body = {"name": "Line 4", "max_uses": 5, "project_id": world.project_id}
    status, reply = await world.call("org_admin", "POST", CLAIMS, json=body)
    assert status == 201, reply
    folder = tmp_path / "device"
    folder.mkdir()
    yield Bench(served, folder, reply["claim"])
