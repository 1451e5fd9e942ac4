"""Every test here runs twice: under asyncio's event loop and under uvloop, the loop
`edge serve` runs on by default. Where the two loops differ (uvloop has no
`loop.sendfile`), the code under test must work on both."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import pytest
import uvloop


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}
