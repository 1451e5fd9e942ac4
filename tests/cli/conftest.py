"""What every command-line test shares."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No EDGE_* variable of the developer's shell may leak into a test."""
    for name in [n for n in os.environ if n.startswith("EDGE_")]:
        monkeypatch.delenv(name)
