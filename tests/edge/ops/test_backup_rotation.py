"""edge/ops/backup_rotation.py: backups named by their UTC time, the newest `keep` kept,
only whole backups counted or removed, and nothing else in the folder touched."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from edge.kernel import clock
from edge.kernel.errors import Conflict
from edge.ops import backup_rotation


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
