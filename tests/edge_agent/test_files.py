"""The agent's files (edge_agent/files.py): owner-only, written whole or not at all."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from edge_agent.files import UnsafeFile, read_secret, state_folder, write_json


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_state_folder_and_its_files_are_owner_only(tmp_path: Path) -> None:
    loose = tmp_path / "state"
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    assert mode(state_folder(loose)) == 0o700
    target = loose / "reported.json"
    target.write_text("{}")
    target.chmod(0o644)
    write_json(target, {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1} and mode(target) == 0o600
    assert [p.name for p in loose.iterdir()] == ["reported.json"]  # no temporary left


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "reported.json"
    write_json(target, {"a": 1})
    with pytest.raises(TypeError):
        write_json(target, {"a": object()})
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["reported.json"]


def test_a_secret_others_may_read_is_refused(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("edk_x\n")
    key.chmod(0o640)
    with pytest.raises(UnsafeFile, match="mode 0640"):
        read_secret(key)
    key.chmod(0o600)
    assert read_secret(key) == "edk_x"
