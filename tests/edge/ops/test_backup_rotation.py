"""edge/ops/backup_rotation.py: backups named by their UTC time, the newest `keep` kept,
only whole backups counted or removed, and nothing else in the folder touched."""

from __future__ import annotations

import fcntl
import os
import re
from datetime import timedelta
from pathlib import Path

import pytest

from edge.kernel import clock
from edge.kernel.errors import Conflict
from edge.ops import backup, backup_rotation
from tests.factory import new_site


def quiet(_: str) -> None:
    """An echo that prints nothing."""


def test_keep_counts_only_whole_backups(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    clock.freeze()
    made = []
    for _ in range(3):
        made.append(backup_rotation.into(data_dir, folder, keep=2, echo=quiet))
        clock.advance(timedelta(seconds=1))
    assert made[2].removed == [made[0].path]
    assert backup_rotation.backups(folder) == [made[1].path, made[2].path]
    assert made[1].removed == []


def test_a_second_backup_in_the_same_second_is_refused(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    clock.freeze()
    first = backup_rotation.into(data_dir, folder, keep=5, echo=quiet)
    with pytest.raises(Conflict):
        backup_rotation.into(data_dir, folder, keep=5, echo=quiet)
    assert backup_rotation.backups(folder) == [first.path]


def test_only_real_folders_with_backup_names_count(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (folder / "edge-2000-01-01T000000Z").symlink_to(elsewhere)  # a link: never followed
    (folder / "edge-2000-01-02T000000Z.txt").mkdir()  # not a backup's name
    (folder / "edge-2000-01-03T000000Z").write_text("a file")
    (folder / "edge-2000-01-04T000000Z.partial").symlink_to(elsewhere)
    made = backup_rotation.into(data_dir, folder, keep=1, echo=quiet)
    assert backup_rotation.backups(folder) == [made.path] and made.removed == []
    assert elsewhere.exists() and (folder / "edge-2000-01-04T000000Z.partial").is_symlink()
    assert (folder / "edge-2000-01-02T000000Z.txt").is_dir()


def test_names_sort_by_age(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    clock.freeze()
    older = backup_rotation.into(data_dir, folder, keep=3, echo=quiet)
    clock.advance(timedelta(days=400))
    newer = backup_rotation.into(data_dir, folder, keep=1, echo=quiet)
    assert newer.removed == [older.path]
    assert newer.path.name == clock.now().strftime("edge-%Y-%m-%dT%H%M%SZ")


NAME = re.compile(r"^edge-\d{4}-\d{2}-\d{2}T\d{6}Z$")


def nightly(data_dir: Path, folder: Path, keep: int, nights: int) -> list[Path]:
    """`nights` backups a day apart (the clock moved, not waited for)."""
    made = []
    for _ in range(nights):
        made.append(backup_rotation.into(data_dir, folder, keep, echo=quiet).path)
        clock.advance(timedelta(days=1))
    return made


def test_the_newest_backups_stay_and_the_oldest_go(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    made = nightly(data_dir, folder, keep=3, nights=5)
    assert all(NAME.match(p.name) for p in made) and len(set(made)) == 5
    assert backup_rotation.backups(folder) == made[-3:]
    assert sorted(p.name for p in folder.iterdir()) == [".edge-backup.lock"] + [
        p.name for p in made[-3:]
    ]
    restored = tmp_path / "restored"
    backup.restore(made[-1], restored, force=False, echo=quiet)  # each one whole
    new_site(restored).services.db.close()


def test_the_name_is_the_utc_time_and_the_folder_owner_only(data_dir: Path, tmp_path: Path) -> None:
    clock.freeze()
    expected = clock.now().strftime("edge-%Y-%m-%dT%H%M%SZ")
    (made,) = nightly(data_dir, tmp_path / "backups", keep=1, nights=1)
    assert made.name == expected
    assert (tmp_path / "backups").stat().st_mode & 0o777 == 0o700
    assert made.stat().st_mode & 0o777 == 0o700


def test_a_folder_that_exists_keeps_its_mode(data_dir: Path, tmp_path: Path) -> None:
    """A shared backup folder (read by a sync tool's group) is not made owner-only: each
    backup in it is."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o750)
    (made,) = nightly(data_dir, folder, keep=1, nights=1)
    assert folder.stat().st_mode & 0o777 == 0o750
    assert made.stat().st_mode & 0o777 == 0o700


def test_nothing_else_in_the_folder_is_touched(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    (folder / "edge-2000-01-01T000000Z").symlink_to(outside)  # named like one, but a link
    (folder / "edge-by-hand").mkdir()
    (folder / "notes.txt").write_text("notes")
    (folder / "edge-2000-01-02T000000Z.partial").write_text("a file, not a folder")
    nightly(data_dir, folder, keep=1, nights=3)
    assert (outside / "keep.txt").read_text() == "mine"
    left = {p.name for p in folder.iterdir()}
    assert {"edge-2000-01-01T000000Z", "edge-by-hand", "notes.txt"} <= left
    assert "edge-2000-01-02T000000Z.partial" in left


def test_an_interrupted_backup_is_cleared_and_never_counted(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    (old,) = nightly(data_dir, folder, keep=1, nights=1)
    partial = folder / "edge-2999-01-01T000000Z.partial"  # sorts after every real name
    partial.mkdir()
    (partial / "edge.db").write_bytes(b"half")
    (new,) = nightly(data_dir, folder, keep=1, nights=1)
    assert not partial.exists()
    assert backup_rotation.backups(folder) == [new] and not old.exists()


def test_a_second_run_while_one_runs_is_refused(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    fd = os.open(folder / backup_rotation.LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(Conflict, match="another backup into"):
            backup_rotation.into(data_dir, folder, 2, echo=quiet)
    finally:
        os.close(fd)
    assert backup_rotation.backups(folder) == []
