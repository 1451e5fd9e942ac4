"""Root is refused, before anything is touched, on a data folder that belongs to another
user: a backup run as root left `blobs.lock` owner-only and root's, and the service (its own
user) could not take it again. As root, the folder's owner is who to run the command as."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from edge import cli
from tests.edge.ops.test_ownership import give_away
from tests.ports import free_port

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the refusal is for root only")
COMMANDS = [
    ["backup", "{tmp}/copy"],
    ["backup", "--into", "{tmp}/backups"],
    ["restore", "{tmp}/copy", "--force"],
    ["check"],
    ["init"],
    ["serve", "--port", "{port}", "--mqtt-port", "0", "--mqtt-tls-port", "0"],
    ["admin", "unlock", "admin"],
    ["admin", "reset-password", "admin"],
    ["admin", "create-org", "--name", "Clinic", "--admin-email", "boss@clinic.example"],
    ["audit", "list"],
]


def snapshot(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Every path under the folder with its owner, mode and modification time."""
    found = {}
    for path in [folder, *folder.rglob("*")]:
        info = path.lstat()
        found[str(path)] = (info.st_uid, info.st_mode, info.st_mtime_ns)
    return found


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_root_is_refused_on_another_users_folder_and_touches_nothing(
    data_dir: Path, tmp_path: Path, command: list[str]
) -> None:
    give_away(data_dir)
    before = snapshot(data_dir)
    port = str(free_port())
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{port}", port) for a in command]
    done = subprocess.run(  # a process: a `serve` that was not refused is stopped by the timeout
        [sys.executable, "-m", "edge", *argv, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and f"sudo -u nobody edge {command[0]}" in done.stderr
    assert snapshot(data_dir) == before
    assert not (data_dir / "blobs.lock").exists()
    assert not (tmp_path / "copy").exists() and not (tmp_path / "backups").exists()


def test_root_may_use_its_own_folder_and_make_a_new_one(data_dir: Path, tmp_path: Path) -> None:
    assert cli.main(["backup", str(tmp_path / "copy"), "--data-dir", str(data_dir)]) == 0
