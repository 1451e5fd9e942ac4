"""Root is refused, before anything is touched, on a data folder that belongs to another
user: a backup run as root left `blobs.lock` owner-only and root's, and the service (its own
user) could not take it again. As root, the folder's owner is who to run the command as."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from edge import cli
from edge.ops import ownership
from tests.factory import new_site
from tests.ports import free_port

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the refusal is for root only")
OWNER = pwd.getpwnam("nobody")
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


def give_away(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        os.lchown(path, OWNER.pw_uid, OWNER.pw_gid)


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
    assert ownership.refusal(data_dir, "backup") is None
    assert ownership.refusal(tmp_path / "not-yet", "init") is None
    assert cli.main(["backup", str(tmp_path / "copy"), "--data-dir", str(data_dir)]) == 0


def test_a_user_without_a_name_is_named_by_its_number(tmp_path: Path) -> None:
    folder = tmp_path / "site"
    folder.mkdir()
    os.chown(folder, 54321, 54321)
    uids = {entry.pw_uid for entry in pwd.getpwall()}
    assert 54321 not in uids
    refused = ownership.refusal(folder, "check")
    assert refused is not None and "sudo -u '#54321' edge check" in refused


def test_the_service_can_use_what_the_refusal_protects(data_dir: Path) -> None:
    """The guard is on the command line, not in the site: the service opens its folder."""
    from storage import staff

    give_away(data_dir)
    assert ownership.refusal(data_dir, "serve") is not None  # the command line refuses root
    site = new_site(data_dir)
    try:
        assert site.services.db.read(staff.first)["username"] == "admin"  # the site opens
    finally:
        site.services.db.close()
