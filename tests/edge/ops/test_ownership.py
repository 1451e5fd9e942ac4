"""edge/ops/ownership.py: root is refused on a data folder another user owns, with the
command that works; its own folder, or one not made yet, is root's to use."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from edge.ops import ownership

# Giving a folder away (chown) needs root, as the rule itself is about root.
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the refusal is for root only")
NO_NAME = 54321  # a user ID with no name on this machine


def test_anyone_but_root_may_run_on_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # this process as another user
    os.chown(tmp_path, NO_NAME, -1)
    assert ownership.refusal(tmp_path, "backup") is None


def test_root_may_use_its_own_folder_or_one_not_made_yet(tmp_path: Path) -> None:
    os.chown(tmp_path, 0, -1)
    assert ownership.refusal(tmp_path, "backup") is None
    assert ownership.refusal(tmp_path / "missing", "restore") is None


def test_root_on_another_users_folder_is_told_how_to_run_it(tmp_path: Path) -> None:
    os.chown(tmp_path, NO_NAME, -1)
    refused = ownership.refusal(tmp_path, "check")
    assert refused is not None
    assert f"belongs to user {NO_NAME}" in refused
    assert f"sudo -u '#{NO_NAME}' edge check" in refused
