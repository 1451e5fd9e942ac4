"""The console's fixtures: one server and one browser per test module (tests/browser/console.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.browser.console import Console, LiveServer, each_console, serve_world
from tests.world import World


@pytest.fixture(scope="module")
def live(
    world_template: World,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator[LiveServer]:
    """The world of tests/world.py served on a free port, for the whole module, with the
    settings of the module's SERVER_SETTINGS and what its `seed` adds."""
    settings = getattr(request.module, "SERVER_SETTINGS", {})
    folder = tmp_path_factory.mktemp("console") / "data"
    server = serve_world(world_template, folder, getattr(request.module, "seed", None), **settings)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def console(live: LiveServer) -> Iterator[Console]:
    yield from each_console(live)
